// SimulationRunner: runs simulations off the GUI thread, one job at a time as far as the user
// is concerned. Each start() gets a new job id; the job before it is asked to stop and
// whatever it still delivers is dropped, so only the newest run ever reaches the views
// (hotspot's rule). A job is a Simulation + RunRecorder on Qt's global thread pool; it talks
// back only through queued calls into this object, carrying plain values (progress numbers,
// a shared immutable RunSnapshot), so no simulation state is ever touched from two threads.
//
// Ownership: owns its jobs; the destructor asks every job to stop and waits for them, so no
// job outlives the runner. Thread-safety: a QObject of the GUI thread; call it from there.
#pragma once

#include <QFuture>
#include <QObject>
#include <QString>
#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "gui/run_snapshot.h"
#include "sim/simulation.h"

namespace servesim::gui {

class SimulationRunner : public QObject {
  Q_OBJECT

 public:
  explicit SimulationRunner(QObject* parent = nullptr);
  ~SimulationRunner() override;

  // Starts `config` in the background and returns its job id (1, 2, ...). A job still
  // running is superseded: asked to stop, its results dropped. `name` labels the snapshot.
  uint64_t start(SimulationConfig config, std::string name = {});
  // Asks the current job to stop; cancelled(job) follows once it has.
  void cancel();
  bool busy() const { return busy_; }
  uint64_t current_job() const { return current_job_; }
  // Waits until every job, superseded ones included, has returned. For tests and shutdown.
  void wait_for_all();

 signals:
  void started(quint64 job);
  // fraction in [0, 1] of requests done, or -1 when the workload has no known total.
  void progress(quint64 job, double fraction, double sim_time_s);
  void finished(std::shared_ptr<const servesim::gui::RunSnapshot> snapshot);
  // The current job could not run (for example the deployment does not fit); one line.
  void failed(quint64 job, const QString& message);
  void cancelled(quint64 job);

 private:
  struct Job {
    uint64_t id = 0;
    std::shared_ptr<std::atomic<bool>> stop;
    QFuture<void> future;
  };

  void on_progress(uint64_t job, double fraction, double sim_time_s);
  void on_done(uint64_t job, std::shared_ptr<const RunSnapshot> snapshot, const QString& error);

  std::vector<Job> jobs_;  // started and not yet reported back
  uint64_t next_job_ = 1;
  uint64_t current_job_ = 0;
  bool busy_ = false;
  bool current_cancelled_ = false;
};

}  // namespace servesim::gui
