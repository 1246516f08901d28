#include "gui/sweep_runner.h"

#include <optional>
#include <utility>

namespace servesim::gui {

SweepRunner::SweepRunner(QObject* parent)
    : JobLauncher(parent), catalog_(std::make_shared<const Catalog>()) {
  qRegisterMetaType<std::shared_ptr<const SweepSnapshot>>();
}

uint64_t SweepRunner::start(nlohmann::json scenario, std::string base_dir, std::string origin,
                            SweepOptions options) {
  // The worker holds its own reference to the catalog: it may outlive this object's members
  // by the moment JobLauncher waits for it. It only builds the calls that emit.
  return launch([this, catalog = catalog_, scenario = std::move(scenario),
                 base_dir = std::move(base_dir), origin = std::move(origin),
                 options = std::move(options)](const Context& job) -> Delivery {
    SweepControl control;
    control.should_stop = [stop = job.stop()] { return stop->load(); };
    control.on_point = [this, &job](size_t done, size_t total) {
      job.post_progress([this, id = job.job(), d = static_cast<int>(done),
                         t = static_cast<int>(total)] { emit progress(id, d, t); });
    };
    std::optional<SweepReport> report =
        run_sweep(scenario, base_dir, origin, options, *catalog, control);
    if (!report) return {};  // stopped
    auto snapshot = std::make_shared<SweepSnapshot>();
    snapshot->job = job.job();
    snapshot->report = std::move(*report);
    snapshot->wall_s = job.elapsed_s();
    return [this, result = std::shared_ptr<const SweepSnapshot>(std::move(snapshot))] {
      emit finished(result);
    };
  });
}

}  // namespace servesim::gui
