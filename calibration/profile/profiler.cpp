#include "calibration/profile/profiler.h"

#include <chrono>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "base/build_info.h"
#include "calibration/profile/profile_run.h"
#include "calibration/profile/profile_target.h"
#include "engine/runtime/shape_batch.h"
#include "engine/runtime/weights.h"
#include "models/catalog.h"
#include "models/config_error.h"
#include "models/json_file.h"
#include "sim/core/rng.h"

namespace servesim {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

constexpr uint64_t kRoundOrderStream = 0x70726f66;  // "prof": the rounds' shuffles

std::string utc_now() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

// The options a resumed run must share with the directory's first run.
nlohmann::json identity(const ProfilerOptions& o, const std::string& model) {
  return {{"model", model},       {"backend", o.backend},
          {"threads", o.threads}, {"block_size", o.block_size},
          {"seed", o.seed},       {"repeats", o.repeats},
          {"warmup", o.warmup},   {"grid", o.grid.to_json()}};
}

void check_options(const ProfilerOptions& o) {
  if (o.model.empty() && !o.model_spec)
    throw ConfigError("calibrate profile: --model NAME is required");
  if (o.out_dir.empty()) throw ConfigError("calibrate profile: --out DIR is required");
  if (o.backend != "cpu" && o.backend != "cuda") {
    throw ConfigError("calibrate profile: --backend must be cpu or cuda, got \"" + o.backend +
                      "\"");
  }
  if (o.threads < 1) throw ConfigError("calibrate profile: --threads must be >= 1");
  if (o.repeats < 1) throw ConfigError("calibrate profile: --repeats must be >= 1");
  if (o.warmup < 0) throw ConfigError("calibrate profile: --warmup must be >= 0");
  if (o.block_size < 1) throw ConfigError("calibrate profile: --block-size must be >= 1");
  o.grid.validate();
}

}  // namespace

ProfilerSummary run_profile(const ProfilerOptions& o, const Catalog& catalog,
                            const ProfileProgress& progress) {
  const Clock::time_point start = Clock::now();
  check_options(o);
  const ModelSpec spec = o.model_spec ? *o.model_spec : catalog.resolve_model(o.model);
  Weights::check_supported(spec);
  const std::vector<ProfileShape> grid = make_profile_grid(o.grid);
  if (o.grid.max_context > spec.max_position_embeddings) {
    throw ConfigError("calibrate profile: --max-context " + std::to_string(o.grid.max_context) +
                      " exceeds " + spec.name + "'s " +
                      std::to_string(spec.max_position_embeddings) + " positions; lower it");
  }

  const fs::path dir(o.out_dir);
  const fs::path env_path = dir / kEnvironmentFile;
  const fs::path samples_path = dir / kSamplesFile;
  const nlohmann::json want = identity(o, spec.name);
  std::map<int, std::set<int>> done;  // shape -> repeats already measured
  ProfilerSummary summary;
  summary.shapes = static_cast<int>(grid.size());

  std::error_code ec;
  fs::create_directories(dir, ec);
  if (!fs::is_directory(dir)) {
    throw ConfigError("calibrate profile: --out " + o.out_dir + ": cannot create the directory");
  }
  if (fs::exists(env_path)) {
    const ProfileRun previous = load_profile_run(o.out_dir);
    const nlohmann::json& have = previous.environment.value("run", nlohmann::json::object());
    for (const auto& [key, value] : want.items()) {
      if (!have.contains(key) || have[key] != value) {
        throw ConfigError("calibrate profile: " + o.out_dir + " holds a profile with " + key +
                          " = " + (have.contains(key) ? have[key].dump() : "none") + ", not " +
                          value.dump() + "; pass the same options to resume it, or another --out");
      }
    }
    for (const ProfileSample& s : previous.samples) {
      if (s.shape >= summary.shapes || s.repeat >= o.repeats ||
          s.seqs != grid[static_cast<size_t>(s.shape)]) {
        throw ConfigError("calibrate profile: " + o.out_dir + " holds shape " +
                          std::to_string(s.shape) + " repeat " + std::to_string(s.repeat) +
                          ", which this servesim's grid does not have (profiled by another "
                          "version?); use another --out");
      }
      done[s.shape].insert(s.repeat);
      ++summary.samples_resumed;
    }
    if (previous.dropped_partial_lines > 0) {
      // Cut the interrupted line so appends start on a fresh line.
      std::ifstream in(samples_path, std::ios::binary);
      std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      in.close();
      text.resize(text.rfind('\n') == std::string::npos ? 0 : text.rfind('\n') + 1);
      std::ofstream(samples_path, std::ios::binary | std::ios::trunc) << text;
    }
  }

  int64_t max_blocks = 0;
  for (const ProfileShape& s : grid)
    max_blocks = std::max(max_blocks, ShapeBatch::blocks_needed(s, o.block_size));
  const bool resuming = fs::exists(env_path);
  ProfileTarget target =
      make_profile_target(spec, {.backend = o.backend,
                                 .num_blocks = max_blocks + 1,
                                 .block_size = o.block_size,
                                 .threads = o.threads,
                                 .seed = o.seed,
                                 .measure_device = o.measure_device && !resuming});
  Runner& runner = *target.runner;
  if (!resuming) {
    nlohmann::json env = {
        {"run", want},
        {"model", spec.name},
        {"model_spec", spec.to_json()},
        {"backend", o.backend},
        {"device", target.device},
        {"threads", o.threads},
        {"weight_dtype", std::string(dtype_name(target.weight_dtype))},
        {"kv_dtype", std::string(dtype_name(target.kv_dtype))},
        {"servesim_version", servesim_version()},
        {"git_revision", servesim_git_revision()},
        {"date", utc_now()},
    };
    if (!target.measured.empty()) env["measured"] = target.measured;
    std::ofstream out(env_path);
    out << json_text(env) << '\n';
    if (!out) throw ConfigError("calibrate profile: cannot write " + env_path.string());
  }
  std::ofstream samples(samples_path, std::ios::app);
  if (!samples) throw ConfigError("calibrate profile: cannot write " + samples_path.string());

  const int vocab = spec.vocab_size;
  const int total = summary.shapes * o.repeats;
  int finished = summary.samples_resumed;
  if (progress) progress(finished, total);
  std::set<int> warmed;
  const Rng order_rng = Rng(o.seed).fork(kRoundOrderStream);
  for (int r = 0; r < o.repeats; ++r) {
    std::vector<int> order(static_cast<size_t>(summary.shapes));
    for (int i = 0; i < summary.shapes; ++i) order[static_cast<size_t>(i)] = i;
    Rng rng = order_rng.fork(static_cast<uint64_t>(r));
    for (size_t k = order.size(); k > 1; --k) {
      std::swap(order[k - 1],
                order[static_cast<size_t>(rng.uniform_int(0, static_cast<int64_t>(k) - 1))]);
    }
    for (const int i : order) {
      if (done[i].count(r) != 0) continue;
      const ShapeBatch batch(grid[static_cast<size_t>(i)], o.block_size, vocab);
      if (warmed.insert(i).second) {
        for (int w = 0; w < o.warmup; ++w) runner.execute(batch.output(), batch.tokens());
      }
      const Clock::time_point t0 = Clock::now();
      const RunnerOutput& res = runner.execute(batch.output(), batch.tokens());
      const Clock::time_point t1 = Clock::now();
      for (int k = 0; k < res.num_samples; ++k) res.greedy_token(k, vocab);
      const Clock::time_point t2 = Clock::now();
      ProfileSample s;
      s.shape = i;
      s.repeat = r;
      s.seqs = grid[static_cast<size_t>(i)];
      s.op_s = res.op_s;
      s.op_s[static_cast<size_t>(Op::kSampling)] = std::chrono::duration<double>(t2 - t1).count();
      s.step_s = std::chrono::duration<double>(t2 - t0).count();
      samples << sample_to_json_line(s) << '\n' << std::flush;
      if (!samples) throw ConfigError("calibrate profile: cannot write " + samples_path.string());
      ++summary.samples_written;
      if (progress) progress(++finished, total);
    }
  }
  summary.wall_s = std::chrono::duration<double>(Clock::now() - start).count();
  return summary;
}

}  // namespace servesim
