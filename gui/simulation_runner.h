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

#include <QObject>
#include <QString>
#include <cstdint>
#include <memory>

#include "gui/job_book.h"
#include "gui/run_snapshot.h"
#include "sim/serving/simulation.h"

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
  bool busy() const { return jobs_.busy(); }
  uint64_t current_job() const { return jobs_.current(); }
  // Waits until every job, superseded ones included, has returned. For tests and shutdown.
  void wait_for_all() { jobs_.wait_for_all(); }

 signals:
  void started(quint64 job);
  // fraction in [0, 1] of requests done, or -1 when the workload has no known total.
  void progress(quint64 job, double fraction, double sim_time_s);
  void finished(std::shared_ptr<const servesim::gui::RunSnapshot> snapshot);
  // The current job could not run (for example the deployment does not fit); one line.
  void failed(quint64 job, const QString& message);
  void cancelled(quint64 job);

 private:
  void on_progress(uint64_t job, double fraction, double sim_time_s);
  void on_done(uint64_t job, std::shared_ptr<const RunSnapshot> snapshot, const QString& error);

  JobBook jobs_;  // last member: destroyed first, stopping and waiting for every worker
};

}  // namespace servesim::gui
