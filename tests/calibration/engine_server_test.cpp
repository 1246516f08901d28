// EngineServer: a tiny model served in real time must see exactly the simulator's request
// stream, generate exactly each request's output length, stamp consistent times, and refuse
// what it cannot serve with one-line errors. Workloads arrive fast (tens of ms in all) so each
// test takes well under a second.
#include "engine/realtime/engine_server.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "models/config_error.h"
#include "sim/run/simulation.h"
#include "sim/scenario/scenario.h"
#include "sim/workload/workload.h"

namespace servesim {
namespace {

namespace fs = std::filesystem;

std::string tiny_model_file() {
  // Private to this process: the tests run in parallel processes that each write it.
  const fs::path path = fs::temp_directory_path() /
                        ("servesim_engine_server_tiny_" + std::to_string(::getpid()) + ".json");
  std::ofstream(path) << R"({"name": "tiny-serve", "hidden_size": 32, "num_layers": 2,
    "num_heads": 4, "num_kv_heads": 2, "head_dim": 8, "intermediate_size": 48,
    "vocab_size": 64, "max_position_embeddings": 256, "dtype": "fp32"})";
  return path.string();
}

// 16 Poisson requests at 400 QPS with varied lengths: the whole run takes ~50 ms. The
// simulator's KV cache is pinned small (a tiny model on a 24 GB GPU would get millions of
// blocks); the engine sizes its own.
// The engine runs in process, so the simulation it is compared with has no API server either.
nlohmann::json tiny_scenario() {
  return nlohmann::json::parse(R"({
    "name": "tiny", "gpu": "L4",
    "engine": {"max_model_len": 128, "max_num_seqs": 4, "max_num_batched_tokens": 64,
               "enable_prefix_caching": true, "num_gpu_blocks_override": 64},
    "workload": {"arrival": {"type": "poisson", "rate_qps": 400},
                 "prompt_tokens": {"type": "uniform", "min": 4, "max": 60},
                 "output_tokens": {"type": "uniform", "min": 1, "max": 12},
                 "num_requests": 16},
    "service": "none",
    "seed": 3})");
}

SimulationConfig config_of(nlohmann::json j) {
  j["model"] = tiny_model_file();
  Catalog catalog;
  return parse_scenario(j, ".", "tiny", catalog).config;
}

class RecordingObserver final : public Observer {
 public:
  void on_request_done(const RequestRecord& r) override { records.push_back(r); }
  std::vector<RequestRecord> records;
};

std::map<uint64_t, RequestRecord> by_id(const std::vector<RequestRecord>& records) {
  std::map<uint64_t, RequestRecord> m;
  for (const RequestRecord& r : records) m.emplace(r.id, r);
  return m;
}

TEST(EngineServer, ServesTheSimulatorsRequestStream) {
  const SimulationConfig config = config_of(tiny_scenario());
  RecordingObserver engine_observer;
  const EngineServeResult result = serve_on_engine(config, {}, engine_observer);
  RecordingObserver sim_observer;
  Simulation(config).run(sim_observer);

  const auto engine = by_id(result.records);
  const auto sim = by_id(sim_observer.records);
  ASSERT_EQ(engine.size(), 16u);
  ASSERT_EQ(sim.size(), engine.size());
  for (const auto& [id, s] : sim) {
    SCOPED_TRACE(id);
    ASSERT_TRUE(engine.count(id));
    const RequestRecord& e = engine.at(id);
    EXPECT_EQ(e.arrival_s, s.arrival_s);
    EXPECT_EQ(e.prompt_tokens, s.prompt_tokens);
    EXPECT_EQ(e.output_tokens, s.output_tokens);
    EXPECT_EQ(e.status, s.status);
  }
  EXPECT_EQ(engine_observer.records.size(), result.records.size());
}

TEST(EngineServer, EveryRequestGeneratesItsOutputLengthWithConsistentTimes) {
  const SimulationConfig config = config_of(tiny_scenario());
  std::map<uint64_t, RequestSpec> specs;
  for (auto source = make_request_source(config.workload); source->next_arrival_s();) {
    const RequestSpec spec = source->pop();
    specs.emplace(spec.id, spec);
  }
  NullObserver observer;
  const EngineServeResult result = serve_on_engine(config, {}, observer);

  uint64_t gaps = 0;
  for (const RequestRecord& r : result.records) {
    SCOPED_TRACE(r.id);
    ASSERT_EQ(r.status, RequestOutcome::kOk);
    EXPECT_EQ(r.output_tokens, specs.at(r.id).output_tokens);
    EXPECT_EQ(r.prompt_tokens, specs.at(r.id).prompt_tokens);
    // Admitted when its arrival came on the wall clock, never before.
    EXPECT_LE(r.arrival_s, r.first_scheduled_s);
    EXPECT_LE(r.first_scheduled_s, r.first_token_s);
    EXPECT_LE(r.first_token_s, r.finish_s);
    EXPECT_LE(r.ttft_s(), r.e2e_s());
    gaps += static_cast<uint64_t>(r.output_tokens - 1);
  }
  const MetricsSummary& m = result.summary;
  EXPECT_EQ(m.completed, 16u);
  EXPECT_EQ(m.rejected, 0u);
  EXPECT_EQ(m.itl.count, gaps);
  EXPECT_LE(m.ttft.p50_s, m.e2e.p50_s);
  EXPECT_GT(m.output_throughput, 0);
  EXPECT_GT(result.engine.steps, 0);
  EXPECT_GT(result.engine.busy_s, 0);
  EXPECT_LE(result.engine.busy_s, result.wall_s);
}

TEST(EngineServer, RejectsRequestsBeyondMaxModelLenAsTheSimulatorDoes) {
  nlohmann::json j = tiny_scenario();
  j["engine"]["max_model_len"] = 48;
  const SimulationConfig config = config_of(j);
  NullObserver observer;
  const EngineServeResult result = serve_on_engine(config, {}, observer);
  const SimulationResult sim = Simulation(config).run(observer);
  EXPECT_GT(result.summary.rejected, 0u);
  EXPECT_EQ(result.summary.rejected, sim.summary.rejected);
  EXPECT_EQ(result.summary.completed, sim.summary.completed);
  for (const RequestRecord& r : result.records) {
    if (r.status != RequestOutcome::kRejected) continue;
    EXPECT_TRUE(std::isnan(r.first_token_s));
  }
}

TEST(EngineServer, ClosedLoopClientsSendAfterTheirAnswer) {
  nlohmann::json j = tiny_scenario();
  j["workload"]["arrival"] = {{"type", "closed"}, {"clients", 2}};
  j["workload"]["num_requests"] = 6;
  NullObserver observer;
  const EngineServeResult result = serve_on_engine(config_of(j), {}, observer);
  ASSERT_EQ(result.summary.completed, 6u);
  // Two clients: at most two requests are ever in flight, so each request from the third on
  // arrives no earlier than some earlier request's finish.
  std::vector<RequestRecord> records = result.records;
  std::sort(records.begin(), records.end(),
            [](const RequestRecord& a, const RequestRecord& b) { return a.id < b.id; });
  for (size_t i = 2; i < records.size(); ++i) {
    double earliest_finish = records[0].finish_s;
    for (size_t k = 0; k < i; ++k) earliest_finish = std::min(earliest_finish, records[k].finish_s);
    EXPECT_GE(records[i].arrival_s, earliest_finish) << i;
  }
}

// Static batches of four in arrival order (FCFS): batch k is requests 4k..4k+3 by arrival.
std::vector<std::vector<RequestRecord>> batches_of_four(std::vector<RequestRecord> records) {
  std::sort(records.begin(), records.end(), [](const RequestRecord& a, const RequestRecord& b) {
    return a.arrival_s != b.arrival_s ? a.arrival_s < b.arrival_s : a.id < b.id;
  });
  std::vector<std::vector<RequestRecord>> batches;
  for (size_t i = 0; i < records.size(); ++i) {
    if (i % 4 == 0) batches.emplace_back();
    batches.back().push_back(records[i]);
  }
  return batches;
}

// Each batch starts only once the one before it has finished, and the first waits for its
// fourth member (the gather timeout is far away): request-level batching, as simulated.
void expect_static_batches(const std::vector<RequestRecord>& records) {
  const std::vector<std::vector<RequestRecord>> batches = batches_of_four(records);
  ASSERT_EQ(batches.size(), 4u);
  for (const RequestRecord& r : batches[0]) EXPECT_GE(r.first_scheduled_s, batches[0][3].arrival_s);
  for (size_t k = 1; k < batches.size(); ++k) {
    double previous_end_s = 0;
    for (const RequestRecord& r : batches[k - 1])
      previous_end_s = std::max(previous_end_s, r.finish_s);
    for (const RequestRecord& r : batches[k]) EXPECT_GE(r.first_scheduled_s, previous_end_s) << k;
  }
}

TEST(EngineServer, StaticBatchingRunsRequestLevelBatchesAsTheSimulatorDoes) {
  nlohmann::json j = tiny_scenario();
  j["engine"]["batching"] = "static";
  j["engine"]["static_batch_timeout_s"] = 30;
  const SimulationConfig config = config_of(j);
  NullObserver observer;
  const EngineServeResult result = serve_on_engine(config, {}, observer);
  ASSERT_EQ(result.summary.completed, 16u);
  for (const RequestRecord& r : result.records) EXPECT_EQ(r.status, RequestOutcome::kOk);
  {
    SCOPED_TRACE("engine");
    expect_static_batches(result.records);
  }
  RecordingObserver sim;
  Simulation(config).run(sim);
  SCOPED_TRACE("simulator");
  expect_static_batches(sim.records);
}

TEST(EngineServer, StaticBatchGatherTimeoutStartsAPartialBatch) {
  // Two closed-loop clients never fill a batch of four: each batch but the last (released
  // once the workload has nothing left) waits out the 50 ms gather timeout.
  nlohmann::json j = tiny_scenario();
  j["engine"]["batching"] = "static";
  j["engine"]["static_batch_timeout_s"] = 0.05;
  j["workload"]["arrival"] = {{"type", "closed"}, {"clients", 2}};
  j["workload"]["num_requests"] = 6;
  NullObserver observer;
  const EngineServeResult result = serve_on_engine(config_of(j), {}, observer);
  ASSERT_EQ(result.summary.completed, 6u);
  std::vector<RequestRecord> records = result.records;
  std::sort(records.begin(), records.end(),
            [](const RequestRecord& a, const RequestRecord& b) { return a.id < b.id; });
  for (size_t i = 0; i < 2; ++i) EXPECT_GE(records[i].first_scheduled_s, 0.05) << i;
}

TEST(EngineServer, MultiTurnSessionsHitTheCacheOnTheirPreviousPrompt) {
  nlohmann::json j = tiny_scenario();
  j["workload"]["prompt_tokens"] = 40;
  j["workload"]["multi_turn"] = {{"turns", 2}, {"user_tokens", 4}};
  // One client, one session at a time: every second turn comes after its first whatever the
  // engine's speed (an open-loop burst could spend the request cap on first turns alone when
  // steps are slow, as under sanitizers).
  j["workload"]["arrival"] = {{"type", "closed"}, {"clients", 1}};
  j["workload"]["num_requests"] = 4;
  const SimulationConfig config = config_of(j);
  NullObserver observer;
  const EngineServeResult result = serve_on_engine(config, {}, observer);
  const SimulationResult sim = Simulation(config).run(observer);
  EXPECT_EQ(result.summary.completed, 4u);
  // A second turn repeats its first turn's 40-token prompt (two full 16-token blocks) and
  // answer; the engine's answer is the model's, so only the simulator also hits on it.
  EXPECT_GT(result.summary.cached_prompt_tokens, 0u);
  EXPECT_EQ(result.summary.cached_prompt_tokens % 32, 0u);
  EXPECT_LE(result.summary.cached_prompt_tokens, sim.summary.cached_prompt_tokens);
}

TEST(EngineServer, SteppedWorkloadsReportEachStep) {
  nlohmann::json j = tiny_scenario();
  j["workload"]["arrival"] = {{"type", "stepped"}, {"steps", {1, 2}}, {"step_duration_s", 0.1}};
  j["workload"].erase("num_requests");
  NullObserver observer;
  const EngineServeResult result = serve_on_engine(config_of(j), {}, observer);
  ASSERT_EQ(result.by_step.size(), 2u);
  EXPECT_GT(result.by_step[0].completed, 0u);
  EXPECT_GT(result.by_step[1].completed, 0u);
}

TEST(EngineServer, MaxRequestsCapsTheRun) {
  EngineServeOptions options;
  options.max_requests = 5;
  NullObserver observer;
  const EngineServeResult result = serve_on_engine(config_of(tiny_scenario()), options, observer);
  EXPECT_EQ(result.records.size(), 5u);
}

TEST(EngineServer, SizesTheKvCacheFromTheOptions) {
  const SimulationConfig config = config_of(tiny_scenario());
  // Default: max_num_seqs (4) sequences of max_model_len (128) tokens in 16-token blocks.
  EXPECT_EQ(EngineServer(config, {}).scheduler_config().num_gpu_blocks, 4 * 8 + 1);
  EngineServeOptions options;
  options.num_gpu_blocks = 10;
  EXPECT_EQ(EngineServer(config, options).scheduler_config().num_gpu_blocks, 10);
  options.num_gpu_blocks = 0;
  options.kv_cache_mib = 1;
  // 2 layers x 2 KV heads x 8 dims x 2 (K and V) x 4 bytes = 256 B a token, 4 KiB a block.
  const EngineServer sized(config, options);
  EXPECT_EQ(sized.scheduler_config().num_gpu_blocks, 256 + 1);
  EXPECT_EQ(sized.kv_cache_bytes(), int64_t{1} << 20);
  options.num_gpu_blocks = 10;
  EXPECT_THROW(EngineServer(config, options), ConfigError);
}

TEST(EngineServer, TraceHasOneLinePerStepWithOpsWhenProfiling) {
  std::ostringstream trace;
  EngineServeOptions options;
  options.trace = &trace;
  options.profile = true;
  NullObserver observer;
  const EngineServeResult result = serve_on_engine(config_of(tiny_scenario()), options, observer);
  std::istringstream lines(trace.str());
  int64_t count = 0;
  for (std::string line; std::getline(lines, line); ++count) {
    const nlohmann::json step = nlohmann::json::parse(line);
    EXPECT_TRUE(step.contains("ops_s"));
  }
  EXPECT_EQ(count, result.engine.steps);
  EXPECT_GT(result.engine.op_totals[Op::kMlp], 0);
}

void expect_config_error(const SimulationConfig& config, const EngineServeOptions& options,
                         const std::string& needle) {
  try {
    EngineServer server(config, options);
    FAIL() << "expected ConfigError mentioning " << needle;
  } catch (const ConfigError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find(needle), std::string::npos) << what;
    EXPECT_EQ(what.find('\n'), std::string::npos) << what;
  }
}

TEST(EngineServer, RefusesWhatTheEngineCannotServe) {
  nlohmann::json big = tiny_scenario();
  big["model"] = "Llama-2-13B";
  big["gpu"] = "A100-80GB";
  Catalog catalog;
  expect_config_error(parse_scenario(big, ".", "big", catalog).config, {}, "--force");

  nlohmann::json replicas = tiny_scenario();
  replicas["parallel"] = {{"data_parallel_size", 2}};
  expect_config_error(config_of(replicas), {}, "data_parallel_size 2");

  nlohmann::json async = tiny_scenario();
  async["engine"]["async_scheduling"] = true;
  expect_config_error(config_of(async), {}, "engine.async_scheduling");

  EngineServeOptions threads;
  threads.num_threads = 0;
  expect_config_error(config_of(tiny_scenario()), threads, "--threads");
  EngineServeOptions blocks;
  blocks.num_gpu_blocks = 1;
  expect_config_error(config_of(tiny_scenario()), blocks, "at least 2");
}

}  // namespace
}  // namespace servesim
