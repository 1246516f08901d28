// Shared by the calibration tests: the tiny model they profile, temporary directories, and
// synthetic profile runs generated from known coefficients.
#pragma once

#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <functional>
#include <random>
#include <string>

#include "calibration/profile/profile_grid.h"
#include "calibration/profile/profile_run.h"
#include "models/catalog.h"
#include "models/cost_features.h"
#include "models/model_spec.h"
#include "sim/scenario/scenario.h"

namespace servesim::testing {

inline const std::string kTinyModelPath =
    std::string(SERVESIM_SOURCE_DIR) + "/tests/calibration/data/llama-tiny-calib.json";

// A deployment's scenario around `deployment` (model, gpu, engine, ...): a workload of one
// request, which the serving cases replace with each run's own.
inline SimulationConfig scenario_of(nlohmann::json deployment) {
  deployment["workload"] = {{"arrival", {{"type", "poisson"}, {"rate_qps", 1}}},
                            {"prompt_tokens", 1},
                            {"output_tokens", 1},
                            {"num_requests", 1}};
  return parse_scenario(deployment, ".", "test", Catalog()).config;
}

inline ModelSpec tiny_model() {
  return Catalog().resolve_model(kTinyModelPath);
}

// A fresh, empty directory under the system's temporary folder, private to this process (ctest
// runs tests in parallel processes, and two checkouts may test at once).
inline std::string fresh_dir(const std::string& name) {
  const auto dir = std::filesystem::temp_directory_path() /
                   ("servesim_" + name + "_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir.string();
}

// Known seconds per feature unit, per op, roughly a CPU's: 20 GFLOP/s GEMMs (slower for small
// batches), 10 GB/s weight reads, KV reads at 5 GB/s, microseconds of per-sequence and per-step
// overhead.
inline std::array<std::vector<double>, kNumOps> known_coefficients() {
  std::array<std::vector<double>, kNumOps> c;
  auto set = [&](Op op, std::vector<double> v) { c[static_cast<size_t>(op)] = std::move(v); };
  set(Op::kQkv, {1 / 20e9, 1 / 10e9, 1 / 30e9, 1 / 40e9});
  set(Op::kOProj, {1 / 18e9, 1 / 9e9, 1 / 25e9, 1 / 30e9});
  set(Op::kMlp, {1 / 22e9, 1 / 11e9, 1 / 40e9, 1 / 50e9});
  set(Op::kLmHead, {1 / 15e9, 1 / 8e9, 1 / 20e9, 1 / 16e9});
  set(Op::kAttentionPrefill, {1 / 6e9, 1 / 4e9, 2e-6});
  set(Op::kAttentionDecode, {1 / 5e9, 3e-6});
  set(Op::kNormRopeEmbed, {1 / 2e9, 5e-6});
  set(Op::kSampling, {1 / 1e9, 4e-6});
  set(Op::kOverhead, {30e-6, 2e-6});
  return c;
}

// Times a GEMM op's linear time by, given the op and its rows (models/cost_features.h).
using RowSlowdown = std::function<double(Op, double rows)>;

// A run of the tiny model over the full grid whose op times are the known coefficients'
// predictions times (1 + noise), noise uniform in [-noise, noise], each GEMM's also times
// `slowdown` when one is given.
inline ProfileRun synthetic_run(double noise, int repeats = 3, uint64_t seed = 1,
                                const RowSlowdown& slowdown = {}) {
  const ModelSpec spec = tiny_model();
  const CostFeatures features(spec, DType::kFp32, DType::kFp32);
  const auto coeffs = known_coefficients();
  ProfileRun run;
  run.environment = {
      {"model", spec.name}, {"model_spec", spec.to_json()},
      {"backend", "cpu"},   {"device", "synthetic"},
      {"threads", 1},       {"weight_dtype", "fp32"},
      {"kv_dtype", "fp32"}, {"measured", {{"gemm_flops", 25e9}, {"read_bandwidth_Bps", 12e9}}}};
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-noise, noise);
  const std::vector<ProfileShape> grid = make_profile_grid(ProfileGridOptions{});
  for (size_t i = 0; i < grid.size(); ++i) {
    const BatchShape shape = to_batch_shape(grid[i]);
    for (int r = 0; r < repeats; ++r) {
      ProfileSample s;
      s.shape = static_cast<int>(i);
      s.repeat = r;
      s.seqs = grid[i];
      for (size_t op = 0; op < kNumOps; ++op) {
        const OpFeatureValues f = features.features(static_cast<Op>(op), shape);
        double t = 0;
        for (size_t k = 0; k < coeffs[op].size(); ++k) t += coeffs[op][k] * f.values[k];
        if (slowdown && is_gemm_op(static_cast<Op>(op))) {
          t *= slowdown(static_cast<Op>(op), gemm_rows(static_cast<Op>(op), shape));
        }
        s.op_s[op] = t * (1 + u(rng));
        s.step_s += s.op_s[op];
      }
      run.samples.push_back(s);
    }
  }
  return run;
}

}  // namespace servesim::testing
