// SweepRunner: runs trade-off sweeps (plan/sweep.h's run_sweep, the function behind
// `servesim sweep`) off the GUI thread — a JobLauncher (job ids, supersede, cancel, stale
// results dropped) whose typed signals carry the points done and the finished report as a
// shared immutable SweepSnapshot.
//
// Ownership: owns its jobs through JobLauncher; shares a read-only Catalog with its workers.
// Thread-safety: a QObject of the GUI thread; call it from there.
#pragma once

#include <QObject>
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "gui/job_launcher.h"
#include "models/catalog.h"
#include "plan/sweep.h"

namespace servesim::gui {

// A finished sweep, as handed to the GUI thread.
struct SweepSnapshot {
  uint64_t job = 0;
  SweepReport report;
  double wall_s = 0.0;  // wall-clock seconds the sweep took
};

class SweepRunner : public JobLauncher {
  Q_OBJECT

 public:
  explicit SweepRunner(QObject* parent = nullptr);

  // Starts a sweep of `scenario` (the document's JSON; `base_dir` and `origin` as
  // parse_scenario takes them) and returns its job id (1, 2, ...). A job still running is
  // superseded. A scenario, axis or override that does not parse comes back as failed().
  uint64_t start(nlohmann::json scenario, std::string base_dir, std::string origin,
                 SweepOptions options);

 signals:
  // Points finished so far out of the grid's total.
  void progress(quint64 job, int done, int total);
  void finished(std::shared_ptr<const servesim::gui::SweepSnapshot> snapshot);

 private:
  std::shared_ptr<const Catalog> catalog_;  // shared read-only with the workers
};

}  // namespace servesim::gui
