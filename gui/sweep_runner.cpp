#include "gui/sweep_runner.h"

#include <QElapsedTimer>
#include <QMetaObject>
#include <QtConcurrent/QtConcurrentRun>
#include <algorithm>
#include <exception>
#include <optional>

#include "models/config_error.h"

namespace servesim::gui {

SweepRunner::SweepRunner(QObject* parent)
    : QObject(parent), catalog_(std::make_shared<const Catalog>()) {
  qRegisterMetaType<std::shared_ptr<const SweepSnapshot>>();
}

SweepRunner::~SweepRunner() = default;

uint64_t SweepRunner::start(nlohmann::json scenario, std::string base_dir, std::string origin,
                            SweepOptions options) {
  const JobBook::Ticket ticket = jobs_.open();
  const uint64_t id = ticket.id;
  const std::shared_ptr<std::atomic<bool>> stop = ticket.stop;
  // As in SimulationRunner: queued calls into this object only, and the destructor waits.
  QFuture<void> future = QtConcurrent::run(
      [this, id, stop, catalog = catalog_, scenario = std::move(scenario),
       base_dir = std::move(base_dir), origin = std::move(origin), options = std::move(options)]() {
        QElapsedTimer wall;
        wall.start();
        SweepControl control;
        control.should_stop = [stop] { return stop->load(); };
        control.on_point = [this, id](size_t done, size_t total) {
          const int d = static_cast<int>(done);
          const int t = static_cast<int>(total);
          QMetaObject::invokeMethod(
              this, [this, id, d, t] { on_progress(id, d, t); }, Qt::QueuedConnection);
        };
        std::shared_ptr<const SweepSnapshot> snapshot;
        QString error;
        try {
          std::optional<SweepReport> report =
              run_sweep(scenario, base_dir, origin, options, *catalog, control);
          if (report) {
            auto result = std::make_shared<SweepSnapshot>();
            result->job = id;
            result->report = std::move(*report);
            result->wall_s = static_cast<double>(wall.nsecsElapsed()) * 1e-9;
            snapshot = std::move(result);
          }
        } catch (const ConfigError& e) {
          error = QString::fromStdString(e.what());
        } catch (const std::exception& e) {
          error = QStringLiteral("internal error: ") + QString::fromStdString(e.what());
        }
        QMetaObject::invokeMethod(
            this, [this, id, snapshot, error] { on_done(id, snapshot, error); },
            Qt::QueuedConnection);
      });
  jobs_.add(ticket, future);
  emit started(id);
  return id;
}

void SweepRunner::cancel() {
  jobs_.cancel();
}

void SweepRunner::on_progress(uint64_t job, int done, int total) {
  if (!jobs_.is_running(job)) return;
  emit progress(job, done, total);
}

void SweepRunner::on_done(uint64_t job, std::shared_ptr<const SweepSnapshot> snapshot,
                          const QString& error) {
  const JobBook::Outcome outcome = jobs_.finish(job);
  if (outcome == JobBook::Outcome::kStale) return;  // superseded: its results are stale
  if (outcome == JobBook::Outcome::kCancelled) {
    emit cancelled(job);
  } else if (!snapshot) {
    emit failed(job, error);
  } else {
    emit finished(snapshot);
  }
}

}  // namespace servesim::gui
