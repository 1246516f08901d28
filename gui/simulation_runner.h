// SimulationRunner: runs simulations off the GUI thread — a JobLauncher (job ids, supersede,
// cancel, stale results dropped) whose job is a Simulation + RunRecorder, and whose typed
// signals carry its progress and the finished run as a shared immutable RunSnapshot.
//
// Ownership: owns its jobs through JobLauncher. Thread-safety: a QObject of the GUI thread;
// call it from there.
#pragma once

#include <QObject>
#include <cstdint>
#include <memory>
#include <string>

#include "gui/job_launcher.h"
#include "gui/run_snapshot.h"
#include "sim/run/simulation.h"

namespace servesim::gui {

class SimulationRunner : public JobLauncher {
  Q_OBJECT

 public:
  explicit SimulationRunner(QObject* parent = nullptr);

  // Starts `config` in the background and returns its job id (1, 2, ...). A job still
  // running is superseded: asked to stop, its results dropped. `name` labels the snapshot.
  uint64_t start(SimulationConfig config, std::string name = {});

 signals:
  // fraction in [0, 1] of requests done, or -1 when the workload has no known total.
  void progress(quint64 job, double fraction, double sim_time_s);
  void finished(std::shared_ptr<const servesim::gui::RunSnapshot> snapshot);
};

}  // namespace servesim::gui
