#include "gui/simulation_runner.h"

#include <utility>

#include "gui/run_recorder.h"

namespace servesim::gui {

SimulationRunner::SimulationRunner(QObject* parent) : JobLauncher(parent) {
  qRegisterMetaType<std::shared_ptr<const RunSnapshot>>();
}

uint64_t SimulationRunner::start(SimulationConfig config, std::string name) {
  // The worker only builds the calls that emit; JobLauncher runs them on the GUI thread.
  return launch([this, config = std::move(config), name = std::move(name)](const Context& job) {
    auto post_progress = [this, &job](double fraction, double sim_time_s) {
      job.post_progress([this, id = job.job(), fraction, sim_time_s] {
        emit progress(id, fraction, sim_time_s);
      });
    };
    Simulation simulation(config);
    RunRecorder recorder(job.stop(), simulation.config().metrics, post_progress);
    auto snapshot = std::make_shared<RunSnapshot>();
    snapshot->job = job.job();
    snapshot->name = name;
    snapshot->result = simulation.run(recorder);
    snapshot->slo = simulation.config().metrics.slo;
    snapshot->plan = simulation.memory_plan();
    snapshot->timeline = recorder.timeline();
    snapshot->cdf = recorder.cdf();
    snapshot->sessions = recorder.sessions();
    const SimulationResult& r = snapshot->result;
    snapshot->diagnosis = diagnose({r.summary, r.replicas, r.stations, r.simulated_s,
                                    simulation.config().queue_order == QueueOrder::kPriority,
                                    simulation.config().workload.distinct_prompts},
                                   r.tenants);
    snapshot->wall_s = job.elapsed_s();
    return Delivery([this, result = std::shared_ptr<const RunSnapshot>(std::move(snapshot))] {
      emit finished(result);
    });
  });
}

}  // namespace servesim::gui
