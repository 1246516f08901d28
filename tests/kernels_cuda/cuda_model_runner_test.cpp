// The whole CUDA forward pass against the CPU ModelRunner on the tiny test model: both runners
// execute the same scheduler steps (chunked prefills mixed with decodes, several requests) and
// their logits are compared step by step. The CUDA runner rounds the weights, the KV cache and
// every GEMM input to bf16 while the CPU runs fp32 throughout, so the bound is 3e-2 of the
// largest logit (two layers; one bf16 rounding is up to 3.9e-3 of a value).
#include "engine/runtime/cuda_model_runner.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "engine/runtime/engine.h"
#include "engine/runtime/model_runner.h"
#include "kernels/sampler.h"
#include "tests/engine/tiny_model.h"
#include "tests/kernels_cuda/cuda_test_util.h"

namespace servesim {
namespace {

using testing::test_prompt;
using testing::tiny_model_spec;
using testing::tiny_scheduler_config;

constexpr double kLogitBound = 3e-2;

double logit_error(std::span<const float> got, std::span<const float> ref) {
  double worst = 0, mag = 1e-30;
  for (size_t i = 0; i < ref.size(); ++i) {
    worst = std::max(worst, std::abs(double(got[i]) - ref[i]));
    mag = std::max(mag, std::abs(double(ref[i])));
  }
  return worst / mag;
}

Request make_request(uint64_t id, std::vector<int32_t> prompt, int max_output_tokens) {
  Request r;
  r.id = id;
  r.prompt_token_ids = std::move(prompt);
  r.max_output_tokens = max_output_tokens;
  return r;
}

TEST(CudaModelRunner, LogitsMatchTheCpuRunnerOverMixedSteps) {
  SERVESIM_REQUIRE_CUDA_DEVICE();
  const Weights w = Weights::random(tiny_model_spec(), 11);
  SchedulerConfig cfg = tiny_scheduler_config();
  cfg.max_num_batched_tokens = 24;  // prompts arrive in chunks next to running decodes
  Scheduler scheduler(cfg);
  ModelRunner cpu(w, ModelRunnerOptions{cfg.num_gpu_blocks, cfg.block_size, 1, false});
  CudaModelRunner gpu(CudaWeights::upload(w),
                      CudaModelRunnerOptions{cfg.num_gpu_blocks, cfg.block_size, false});
  for (uint64_t id = 1; id <= 4; ++id) {
    ASSERT_TRUE(scheduler.add_request(
        make_request(id, test_prompt(9 + 13 * int(id), int(id)), 5 + int(id))));
  }
  int steps = 0;
  while (scheduler.has_unfinished()) {
    const SchedulerOutput& out = scheduler.schedule();
    std::vector<std::span<const int32_t>> tokens;
    for (const ScheduledSequence& s : out.sequences) {
      tokens.emplace_back(scheduler.find(s.request_id)->tokens);
    }
    const RunnerOutput& ref = cpu.execute(out, tokens);
    const RunnerOutput& got = gpu.execute(out, tokens);
    ASSERT_EQ(got.num_samples, ref.num_samples);
    StepResult result;
    for (int i = 0; i < ref.num_samples; ++i) {
      EXPECT_LT(logit_error(got.row(i, 64), ref.row(i, 64)), kLogitBound)
          << "step " << steps << ", sample " << i;
      // Both continue with the CPU's choice, so a near-tie cannot make the runs diverge.
      result.sampled_token_ids.push_back(argmax(ref.row(i, 64)));
    }
    scheduler.update(out, result);
    ++steps;
  }
  EXPECT_GT(steps, 8);
}

TEST(CudaModelRunner, EngineOnTheCudaBackendGeneratesAndProfiles) {
  SERVESIM_REQUIRE_CUDA_DEVICE();
  const Weights w = Weights::random(tiny_model_spec(), 5);
  EngineOptions options{tiny_scheduler_config(), 1, true, Backend::kCuda};
  Engine engine(w, options);
  std::vector<int32_t> generated;
  engine.set_token_callback([&](uint64_t, int32_t t) { generated.push_back(t); });
  ASSERT_TRUE(engine.add_request(make_request(1, test_prompt(30), 7)));
  double qkv_s = 0, mlp_s = 0;
  while (engine.has_unfinished()) {
    const StepTrace& t = engine.step();
    qkv_s += t.op_s[size_t(Op::kQkv)];
    mlp_s += t.op_s[size_t(Op::kMlp)];
  }
  ASSERT_EQ(generated.size(), 7u);
  for (int32_t t : generated) EXPECT_TRUE(t >= 0 && t < 64);
  EXPECT_GT(qkv_s, 0);
  EXPECT_GT(mlp_s, 0);
}

TEST(CudaModelRunner, DeviceRandomWeightsRunALlamaShapedModel) {
  SERVESIM_REQUIRE_CUDA_DEVICE();
  ModelSpec spec = tiny_model_spec(3);
  spec.head_dim = 64;  // the 2-warp-dimension instance of the attention kernel
  spec.hidden_size = 256;
  auto weights = CudaWeights::random(spec, 3);
  EXPECT_EQ(weights->bytes_read_per_step(), 3 * (2 * 256 * 4 + (4 * 64 + 2 * 2 * 64) * 256 * 2 +
                                                 256 * 4 * 64 * 2 + 3 * 256 * 48 * 2) +
                                                256 * 4 + 64 * 256 * 2);
  SchedulerConfig cfg = tiny_scheduler_config();
  Engine engine(std::make_unique<CudaModelRunner>(
                    weights, CudaModelRunnerOptions{cfg.num_gpu_blocks, cfg.block_size, false}),
                EngineOptions{cfg, 1, false, Backend::kCuda});
  ASSERT_TRUE(engine.add_request(make_request(1, test_prompt(20), 4)));
  int steps = 0;
  while (engine.has_unfinished()) {
    engine.step();
    for (float v : engine.last_output().row(0, 64)) ASSERT_TRUE(std::isfinite(v));
    ++steps;
  }
  EXPECT_EQ(steps, 4);
}

}  // namespace
}  // namespace servesim
