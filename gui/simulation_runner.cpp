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

SimulationRunner::~SimulationRunner() {
  for (Job& job : jobs_) job.stop->store(true);
  wait_for_all();
}

void SimulationRunner::wait_for_all() {
  for (Job& job : jobs_) job.future.waitForFinished();
}

uint64_t SimulationRunner::start(SimulationConfig config, std::string name) {
  for (Job& job : jobs_) job.stop->store(true);
  const uint64_t id = next_job_++;
  current_job_ = id;
  busy_ = true;
  current_cancelled_ = false;

  auto stop = std::make_shared<std::atomic<bool>>(false);
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
  jobs_.push_back({id, stop, future});
  emit started(id);
  return id;
}

void SimulationRunner::cancel() {
  if (!busy_) return;
  current_cancelled_ = true;
  for (Job& job : jobs_) {
    if (job.id == current_job_) job.stop->store(true);
  }
}

void SimulationRunner::on_progress(uint64_t job, double fraction, double sim_time_s) {
  if (job != current_job_ || !busy_) return;
  emit progress(job, fraction, sim_time_s);
}

void SimulationRunner::on_done(uint64_t job, std::shared_ptr<const RunSnapshot> snapshot,
                               const QString& error) {
  // The job's thread has returned its last value; forget it.
  auto it = std::find_if(jobs_.begin(), jobs_.end(), [job](const Job& j) { return j.id == job; });
  if (it != jobs_.end()) {
    it->future.waitForFinished();
    jobs_.erase(it);
  }
  if (job != current_job_) return;  // superseded: its results are stale
  busy_ = false;
  if (current_cancelled_) {
    emit cancelled(job);
  } else if (!snapshot) {
    emit failed(job, error);
  } else {
    emit finished(snapshot);
  }
}

}  // namespace servesim::gui
