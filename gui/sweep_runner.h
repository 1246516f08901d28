// SweepRunner: runs trade-off sweeps (plan/sweep.h's run_sweep, the function behind
// `servesim sweep`) off the GUI thread, with the same rules as SimulationRunner: each start()
// gets a new job id, a job still running is superseded (asked to stop, whatever it still
// delivers dropped), and the worker talks back only through queued calls carrying plain
// values: points done, and the finished report as a shared immutable SweepSnapshot.
//
// Ownership: owns its jobs; the destructor asks every job to stop and waits for them.
// Thread-safety: a QObject of the GUI thread; call it from there.
#pragma once

#include <QObject>
#include <QString>
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "gui/job_book.h"
#include "models/catalog.h"
#include "plan/sweep.h"

namespace servesim::gui {

// A finished sweep, as handed to the GUI thread.
struct SweepSnapshot {
  uint64_t job = 0;
  SweepReport report;
  double wall_s = 0.0;  // wall-clock seconds the sweep took
};

class SweepRunner : public QObject {
  Q_OBJECT

 public:
  explicit SweepRunner(QObject* parent = nullptr);
  ~SweepRunner() override;

  // Starts a sweep of `scenario` (the document's JSON; `base_dir` and `origin` as
  // parse_scenario takes them) and returns its job id (1, 2, ...). A job still running is
  // superseded. A scenario, axis or override that does not parse comes back as failed().
  uint64_t start(nlohmann::json scenario, std::string base_dir, std::string origin,
                 SweepOptions options);
  // Asks the current job to stop; cancelled(job) follows once it has.
  void cancel();
  bool busy() const { return jobs_.busy(); }
  uint64_t current_job() const { return jobs_.current(); }
  // Waits until every job, superseded ones included, has returned. For tests and shutdown.
  void wait_for_all() { jobs_.wait_for_all(); }

 signals:
  void started(quint64 job);
  // Points finished so far out of the grid's total.
  void progress(quint64 job, int done, int total);
  void finished(std::shared_ptr<const servesim::gui::SweepSnapshot> snapshot);
  // The current job could not run (a key the scenario does not have, say); one line.
  void failed(quint64 job, const QString& message);
  void cancelled(quint64 job);

 private:
  void on_progress(uint64_t job, int done, int total);
  void on_done(uint64_t job, std::shared_ptr<const SweepSnapshot> snapshot, const QString& error);

  std::shared_ptr<const Catalog> catalog_;  // shared read-only with the workers
  JobBook jobs_;  // last member: destroyed first, stopping and waiting for every worker
};

}  // namespace servesim::gui
