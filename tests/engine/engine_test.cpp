#include "engine/runtime/engine.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "models/config_error.h"
#include "tests/engine/tiny_model.h"

namespace servesim {
namespace {

using testing::test_prompt;
using testing::tiny_model_spec;
using testing::tiny_scheduler_config;

Request make_request(uint64_t id, std::vector<int32_t> prompt, int max_output_tokens) {
  Request r;
  r.id = id;
  r.prompt_token_ids = std::move(prompt);
  r.max_output_tokens = max_output_tokens;
  return r;
}

// Runs `engine` to completion; returns each request's sampled tokens and the logits of its
// first sampled token.
struct RunResult {
  std::map<uint64_t, std::vector<int32_t>> tokens;
  std::map<uint64_t, std::vector<float>> first_logits;
};

RunResult run_to_completion(Engine& engine, int vocab) {
  RunResult r;
  engine.set_token_callback([&](uint64_t id, int32_t tok) { r.tokens[id].push_back(tok); });
  while (engine.has_unfinished()) {
    const StepTrace& t = engine.step();
    int sample = 0;
    for (const StepSequenceTrace& s : t.sequences) {
      if (s.token < 0) continue;
      const std::span<const float> row = engine.last_output().row(sample++, vocab);
      if (!r.first_logits.count(s.request_id)) {
        r.first_logits[s.request_id].assign(row.begin(), row.end());
      }
    }
  }
  return r;
}

double max_relative_difference(const std::vector<float>& a, const std::vector<float>& b) {
  double worst = 0, mag = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    worst = std::max(worst, double(std::abs(a[i] - b[i])));
    mag = std::max(mag, double(std::abs(b[i])));
  }
  return worst / mag;
}

TEST(Engine, ChunkedPrefillGivesTheSameLogitsAsWholePrefill) {
  const Weights w = Weights::random(tiny_model_spec(), 11);
  EngineOptions whole{tiny_scheduler_config(), 1, false};
  EngineOptions chunked = whole;
  chunked.scheduler.max_num_batched_tokens = 8;  // 45-token prompt in 6 chunks
  chunked.scheduler.max_num_seqs = 8;
  Engine a(w, whole), b(w, chunked);
  ASSERT_TRUE(a.add_request(make_request(1, test_prompt(45), 5)));
  ASSERT_TRUE(b.add_request(make_request(1, test_prompt(45), 5)));
  const RunResult ra = run_to_completion(a, 64), rb = run_to_completion(b, 64);
  EXPECT_LT(max_relative_difference(rb.first_logits.at(1), ra.first_logits.at(1)), 1e-5);
  EXPECT_EQ(ra.tokens.at(1), rb.tokens.at(1));
  EXPECT_GT(b.scheduler().stats().num_steps, a.scheduler().stats().num_steps);
}

TEST(Engine, PrefixCacheHitGivesTheSameLogitsAsAColdPrefill) {
  const Weights w = Weights::random(tiny_model_spec(), 12);
  EngineOptions cached{tiny_scheduler_config(), 2, false};
  EngineOptions cold = cached;
  cold.scheduler.enable_prefix_caching = false;
  std::vector<int32_t> shared = test_prompt(30, 1);
  std::vector<int32_t> second = shared;
  second.resize(24);
  for (int i = 0; i < 9; ++i) second.push_back((i * 11 + 5) % 64);  // a new tail

  Engine warm(w, cached), plain(w, cold);
  ASSERT_TRUE(warm.add_request(make_request(1, shared, 2)));
  run_to_completion(warm, 64);
  ASSERT_TRUE(warm.add_request(make_request(2, second, 4)));
  const RunResult hit = run_to_completion(warm, 64);
  EXPECT_EQ(warm.scheduler().stats().prefix_cache_hit_tokens, 24);

  ASSERT_TRUE(plain.add_request(make_request(2, second, 4)));
  const RunResult miss = run_to_completion(plain, 64);
  EXPECT_LT(max_relative_difference(hit.first_logits.at(2), miss.first_logits.at(2)), 1e-5);
  EXPECT_EQ(hit.tokens.at(2), miss.tokens.at(2));
}

TEST(Engine, BatchedRequestsDecodeAsTheyWouldAlone) {
  const Weights w = Weights::random(tiny_model_spec(), 13);
  EngineOptions opts{tiny_scheduler_config(), 2, false};
  opts.scheduler.max_num_batched_tokens = 16;  // prefill chunks mixed with decodes
  Engine batched(w, opts);
  for (uint64_t id = 1; id <= 3; ++id) {
    ASSERT_TRUE(batched.add_request(make_request(id, test_prompt(10 + 7 * int(id), int(id)), 6)));
  }
  const RunResult together = run_to_completion(batched, 64);
  for (uint64_t id = 1; id <= 3; ++id) {
    Engine alone(w, EngineOptions{tiny_scheduler_config(), 1, false});
    ASSERT_TRUE(alone.add_request(make_request(id, test_prompt(10 + 7 * int(id), int(id)), 6)));
    const RunResult single = run_to_completion(alone, 64);
    EXPECT_EQ(together.tokens.at(id), single.tokens.at(id)) << "request " << id;
    EXPECT_LT(max_relative_difference(together.first_logits.at(id), single.first_logits.at(id)),
              1e-5);
  }
}

TEST(Engine, DecodingIsDeterministicGreedyAndSeeded) {
  const Weights w = Weights::random(tiny_model_spec(), 14);
  for (const SamplingParams sp : {SamplingParams{}, SamplingParams{0.9f, 0.8f, 77}}) {
    std::vector<int32_t> first;
    for (int run = 0; run < 2; ++run) {
      Engine e(w, EngineOptions{tiny_scheduler_config(), 1 + run, false});
      ASSERT_TRUE(e.add_request(make_request(5, test_prompt(9), 12), sp));
      const RunResult r = run_to_completion(e, 64);
      ASSERT_EQ(r.tokens.at(5).size(), 12u);
      if (run == 0) first = r.tokens.at(5);
      EXPECT_EQ(r.tokens.at(5), first);
    }
  }
}

TEST(Engine, WarmUpChangesNoTokenNorLogitAndNoCacheHit) {
  const Weights w = Weights::random(tiny_model_spec(), 15);
  SchedulerConfig config = tiny_scheduler_config();
  config.enable_prefix_caching = true;
  RunResult runs[2];
  for (int warm = 0; warm < 2; ++warm) {
    Engine e(w, EngineOptions{config, 1, false});
    if (warm == 1) e.warm_up();
    // A prompt of zeros: the warm-up's own tokens, which must not be found in the cache.
    ASSERT_TRUE(e.add_request(make_request(1, std::vector<int32_t>(20, 0), 6)));
    ASSERT_TRUE(e.add_request(make_request(2, test_prompt(11), 6)));
    runs[warm] = run_to_completion(e, 64);
    EXPECT_EQ(e.scheduler().stats().prefix_cache_hit_tokens, 0);
  }
  EXPECT_EQ(runs[1].tokens, runs[0].tokens);
  for (uint64_t id : {1, 2}) {
    EXPECT_EQ(runs[1].first_logits.at(id), runs[0].first_logits.at(id)) << id;
  }
}

TEST(Engine, WritesOneJsonLinePerStepWithOpTimesWhenProfiling) {
  const Weights w = Weights::random(tiny_model_spec(), 15);
  EngineOptions opts{tiny_scheduler_config(), 1, true};
  Engine e(w, opts);
  std::ostringstream trace;
  e.set_trace_stream(&trace);
  ASSERT_TRUE(e.add_request(make_request(1, test_prompt(6), 3)));
  ASSERT_TRUE(e.add_request(make_request(2, test_prompt(4), 2)));
  run_to_completion(e, 64);
  std::istringstream lines(trace.str());
  std::string line;
  int steps = 0;
  double last_end = 0;
  while (std::getline(lines, line)) {
    const nlohmann::json j = nlohmann::json::parse(line);
    ++steps;
    EXPECT_EQ(j["step"], steps);
    EXPECT_GE(j["start_s"].get<double>(), last_end);
    EXPECT_GE(j["end_s"].get<double>(), j["start_s"].get<double>());
    last_end = j["end_s"].get<double>();
    ASSERT_TRUE(j.contains("ops_s"));
    EXPECT_GT(j["ops_s"]["qkv"].get<double>(), 0.0);
    EXPECT_GT(j["ops_s"]["mlp"].get<double>(), 0.0);
    if (steps == 1) {
      ASSERT_EQ(j["seqs"].size(), 2u);
      EXPECT_EQ(j["seqs"][0]["new"], 6);
      EXPECT_EQ(j["seqs"][0]["ctx"], 0);
      EXPECT_TRUE(j["seqs"][0]["prefill"].get<bool>());
    }
    if (steps == 2) {
      EXPECT_EQ(j["seqs"][0]["ctx"], 6);
    }
  }
  EXPECT_EQ(steps, 3);
}

TEST(Engine, BadInputIsAOneLineErrorOrARejection) {
  const Weights w = Weights::random(tiny_model_spec(), 16);
  Engine e(w, EngineOptions{tiny_scheduler_config(), 1, false});
  try {
    e.add_request(make_request(1, {1, 64}, 2));
    FAIL() << "token outside the vocabulary accepted";
  } catch (const ConfigError& err) {
    EXPECT_NE(std::string(err.what()).find("vocabulary"), std::string::npos);
  }
  EXPECT_THROW(e.add_request(make_request(2, {1}, 2), SamplingParams{-1.0f, 1.0f, 0}), ConfigError);
  EXPECT_FALSE(e.add_request(make_request(3, test_prompt(300), 2)));  // beyond max_model_len
  ASSERT_EQ(e.finished().size(), 1u);
  EXPECT_NE(e.finished()[0].reason.find("max_model_len"), std::string::npos);

  ModelSpec moe = tiny_model_spec();
  moe.moe = MoeSpec{4, 2, 16, 0, 0, false};
  EXPECT_THROW(Weights::random(moe, 1), ConfigError);
  EngineOptions no_cache{tiny_scheduler_config(), 1, false};
  no_cache.scheduler.num_gpu_blocks = 1;
  EXPECT_THROW(Engine(w, no_cache), ConfigError);
}

}  // namespace
}  // namespace servesim
