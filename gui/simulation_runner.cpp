#include "gui/simulation_runner.h"

#include <QElapsedTimer>
#include <QMetaObject>
#include <QtConcurrent/QtConcurrentRun>
#include <algorithm>
#include <exception>

#include "gui/run_recorder.h"
#include "models/config_error.h"

namespace servesim::gui {

SimulationRunner::SimulationRunner(QObject* parent) : QObject(parent) {
  qRegisterMetaType<std::shared_ptr<const RunSnapshot>>();
}

SimulationRunner::~SimulationRunner() = default;

uint64_t SimulationRunner::start(SimulationConfig config, std::string name) {
  const JobBook::Ticket ticket = jobs_.open();
  const uint64_t id = ticket.id;
  const std::shared_ptr<std::atomic<bool>> stop = ticket.stop;
  // The worker reaches this object only through queued calls, which Qt discards if the
  // runner is gone; the destructor waits for the worker anyway.
  QFuture<void> future = QtConcurrent::run([this, id, stop, config = std::move(config),
                                            name = std::move(name)]() {
    QElapsedTimer wall;
    wall.start();
    auto post_progress = [this, id](double fraction, double sim_time_s) {
      QMetaObject::invokeMethod(
          this, [this, id, fraction, sim_time_s] { on_progress(id, fraction, sim_time_s); },
          Qt::QueuedConnection);
    };
    std::shared_ptr<const RunSnapshot> snapshot;
    QString error;
    try {
      Simulation simulation(config);
      RunRecorder recorder(stop, simulation.config().metrics, post_progress);
      auto result = std::make_shared<RunSnapshot>();
      result->job = id;
      result->name = name;
      result->result = simulation.run(recorder);
      result->slo = simulation.config().metrics.slo;
      result->plan = simulation.memory_plan();
      result->timeline = recorder.timeline();
      result->cdf = recorder.cdf();
      result->wall_s = static_cast<double>(wall.nsecsElapsed()) * 1e-9;
      snapshot = std::move(result);
    } catch (const ConfigError& e) {
      error = QString::fromStdString(e.what());
    } catch (const std::exception& e) {
      error = QStringLiteral("internal error: ") + QString::fromStdString(e.what());
    }
    QMetaObject::invokeMethod(
        this, [this, id, snapshot, error] { on_done(id, snapshot, error); }, Qt::QueuedConnection);
  });
  jobs_.add(ticket, future);
  emit started(id);
  return id;
}

void SimulationRunner::cancel() {
  jobs_.cancel();
}

void SimulationRunner::on_progress(uint64_t job, double fraction, double sim_time_s) {
  if (!jobs_.is_running(job)) return;
  emit progress(job, fraction, sim_time_s);
}

void SimulationRunner::on_done(uint64_t job, std::shared_ptr<const RunSnapshot> snapshot,
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
