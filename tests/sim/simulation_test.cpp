// End-to-end runs of the simulator on small scenarios: determinism, conservation of
// requests and tokens, and the behaviours practitioners report (continuous vs static
// batching, prefix caching, tensor parallelism).
#include "sim/run/simulation.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "models/catalog.h"
#include "models/config_error.h"
#include "sim/scenario/scenario.h"
#include "sim/service/vllm_frontend.h"

namespace servesim {
namespace {

nlohmann::json base_scenario() {
  return nlohmann::json::parse(R"({
    "model": "Llama-2-7B",
    "gpu": "A100-80GB",
    "engine": {"max_model_len": 4096},
    "workload": {"arrival": {"type": "poisson", "rate_qps": 4}, "prompt_tokens": 256,
                 "output_tokens": 64, "num_requests": 300},
    "seed": 3
  })");
}

SimulationConfig config_of(nlohmann::json j, const std::vector<std::string>& overrides = {}) {
  apply_overrides(j, overrides);
  return parse_scenario(j, "", "test", Catalog()).config;
}

SimulationResult run(const SimulationConfig& c) {
  Simulation sim(c);
  NullObserver observer;
  return sim.run(observer);
}

TEST(Simulation, SameInputsSameFingerprintAndNumbers) {
  const SimulationResult a = run(config_of(base_scenario()));
  const SimulationResult b = run(config_of(base_scenario()));
  EXPECT_EQ(a.fingerprint, b.fingerprint);
  EXPECT_EQ(a.events, b.events);
  EXPECT_EQ(a.summary.ttft.p99_s, b.summary.ttft.p99_s);
  EXPECT_EQ(a.summary.e2e.mean_s, b.summary.e2e.mean_s);
  const SimulationResult c = run(config_of(base_scenario(), {"seed=4"}));
  EXPECT_NE(a.fingerprint, c.fingerprint);
}

TEST(Simulation, EveryRequestFinishesWithItsOutputLength) {
  const SimulationResult r = run(config_of(base_scenario()));
  EXPECT_EQ(r.summary.completed, 300u);
  EXPECT_EQ(r.summary.output_tokens, 300u * 64);
  EXPECT_EQ(r.summary.input_tokens, 300u * 256);
  EXPECT_GT(r.summary.ttft.p50_s, 0);
  EXPECT_LE(r.summary.ttft.p50_s, r.summary.ttft.p99_s);
  EXPECT_GT(r.summary.tpot.mean_s, 0);
  // TPOT is the mean gap after the first token: between the smallest and largest ITL.
  EXPECT_LE(r.summary.tpot.mean_s, r.summary.itl.max_s * 1.01);
}

TEST(Simulation, RequestsLongerThanMaxModelLenAreRejected) {
  const SimulationResult r =
      run(config_of(base_scenario(), {"engine.max_model_len=300", "workload.num_requests=20"}));
  EXPECT_EQ(r.summary.rejected, 20u);
  EXPECT_EQ(r.summary.completed, 0u);
  EXPECT_DOUBLE_EQ(r.summary.error_rate, 1.0);
}

TEST(Simulation, ContinuousBatchingMoreThanDoublesStaticThroughput) {
  // A saturated 7B server with long-tailed answer lengths, as chat answers are: static
  // batches wait for their longest member, continuous batching refills each slot as soon as
  // it frees.
  const std::vector<std::string> load = {
      "workload.arrival.rate_qps=50", "workload.num_requests=1500",
      R"(workload.output_tokens={"type": "lognormal", "mean": 256, "std": 384, "min": 8, "max": 2048})",
      "engine.max_num_seqs=64"};
  std::vector<std::string> static_load = load;
  static_load.push_back("engine.batching=\"static\"");
  const SimulationResult continuous = run(config_of(base_scenario(), load));
  const SimulationResult batched = run(config_of(base_scenario(), static_load));
  EXPECT_EQ(batched.summary.completed, 1500u);
  EXPECT_GT(continuous.summary.output_throughput, 2.0 * batched.summary.output_throughput)
      << continuous.summary.output_throughput << " vs " << batched.summary.output_throughput;
  std::printf("continuous %.0f tok/s, static %.0f tok/s\n", continuous.summary.output_throughput,
              batched.summary.output_throughput);
}

TEST(Simulation, PrefixCachingCutsTtftOfASharedSystemPrompt) {
  const std::vector<std::string> shared = {
      R"(workload.shared_prefix={"groups": 1, "tokens": 3000})", "workload.arrival.rate_qps=2"};
  std::vector<std::string> off = shared;
  off.push_back("engine.enable_prefix_caching=false");
  const SimulationResult with = run(config_of(base_scenario(), shared));
  const SimulationResult without = run(config_of(base_scenario(), off));
  EXPECT_GT(with.summary.prefix_cache_hit_rate, 0.85);
  EXPECT_LT(with.summary.ttft.mean_s, 0.5 * without.summary.ttft.mean_s);
}

// A benchmark that cycles through a small dataset (aiperf's 100 prompts by default) serves
// most prompts from the prefix cache: a lower TTFT than the same load of new prompts, and
// none of it without prefix caching.
TEST(Simulation, RepeatedDatasetPromptsHitThePrefixCache) {
  const std::vector<std::string> closed = {R"(workload.arrival={"type": "closed", "clients": 16})",
                                           "workload.prompt_tokens=2000",
                                           "workload.num_requests=400"};
  std::vector<std::string> repeated = closed;
  repeated.push_back("workload.distinct_prompts=20");
  std::vector<std::string> uncached = repeated;
  uncached.push_back("engine.enable_prefix_caching=false");
  const SimulationResult fresh = run(config_of(base_scenario(), closed));
  const SimulationResult reused = run(config_of(base_scenario(), repeated));
  const SimulationResult off = run(config_of(base_scenario(), uncached));
  EXPECT_EQ(fresh.summary.prefix_cache_hit_rate, 0);
  // 20 prompts among 400 requests: at most 20 misses, each hit recomputing one block.
  EXPECT_GT(reused.summary.prefix_cache_hit_rate, 0.9);
  EXPECT_LT(reused.summary.ttft.mean_s, 0.5 * fresh.summary.ttft.mean_s);
  EXPECT_EQ(off.summary.prefix_cache_hit_rate, 0);
  EXPECT_NEAR(off.summary.ttft.mean_s, fresh.summary.ttft.mean_s, 0.1 * fresh.summary.ttft.mean_s);
}

TEST(Simulation, TensorParallelismLowersTpot) {
  auto scenario = base_scenario();
  scenario["model"] = "Llama-2-13B";
  const SimulationResult tp1 = run(config_of(scenario));
  const SimulationResult tp2 = run(config_of(scenario, {"parallel.tensor_parallel_size=2"}));
  EXPECT_LT(tp2.summary.tpot.mean_s, 0.8 * tp1.summary.tpot.mean_s);
}

TEST(Simulation, PipelineAndDataParallelRuns) {
  const SimulationResult pp =
      run(config_of(base_scenario(), {"parallel.pipeline_parallel_size=2"}));
  EXPECT_EQ(pp.summary.completed, 300u);
  const SimulationResult dp = run(config_of(
      base_scenario(), {"parallel.data_parallel_size=3", "cluster.router=\"least_outstanding\""}));
  ASSERT_EQ(dp.replicas.size(), 3u);
  for (const ReplicaSummary& r : dp.replicas) EXPECT_GT(r.steps, 0);
  EXPECT_EQ(dp.summary.completed, 300u);
}

TEST(Simulation, SteppedLoadReportsEachStep) {
  auto scenario = base_scenario();
  scenario["workload"] = nlohmann::json::parse(R"({"arrival": {"type": "stepped",
      "steps": [1, 4, 16], "step_duration_s": 60}, "prompt_tokens": 256, "output_tokens": 64})");
  const SimulationResult r = run(config_of(scenario));
  ASSERT_EQ(r.by_step.size(), 3u);
  EXPECT_LT(r.by_step[0].request_throughput, r.by_step[1].request_throughput);
  EXPECT_LT(r.by_step[1].request_throughput, r.by_step[2].request_throughput);
  EXPECT_LT(r.by_step[0].e2e.p50_s, r.by_step[2].e2e.p50_s);
}

TEST(Simulation, DeploymentThatDoesNotFitIsAConfigError) {
  auto scenario = base_scenario();
  scenario["model"] = "Llama-2-70B";
  EXPECT_THROW(Simulation{config_of(scenario)}, ConfigError);
}

std::string scenario_error(const nlohmann::json& j,
                           const std::vector<std::string>& overrides = {}) {
  try {
    config_of(j, overrides);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

TEST(Scenario, UnknownKeysAreNamedWithTheClosestValidOne) {
  auto j = base_scenario();
  j["engine"]["max_num_seq"] = 8;
  EXPECT_NE(scenario_error(j).find("did you mean 'max_num_seqs'"), std::string::npos)
      << scenario_error(j);
  j = base_scenario();
  j["paralel"] = nlohmann::json::object();
  EXPECT_NE(scenario_error(j).find("'paralel'"), std::string::npos);
  EXPECT_NE(scenario_error(base_scenario(), {"engine.batching=\"dynamic\""}).find("batching"),
            std::string::npos);
  EXPECT_NE(scenario_error(base_scenario(), {"cluster.router=\"fastest\""}).find("router"),
            std::string::npos);
  EXPECT_NE(scenario_error(base_scenario(), {"engine.max_num_seqs=-1"}).find("max_num_seqs"),
            std::string::npos);
}

TEST(Scenario, HostOverheadsAreReadInTheirUnits) {
  const SimulationConfig c = config_of(
      base_scenario(), {"cost_model.step_overhead_ms=0.3", "cost_model.seq_overhead_us=45"});
  EXPECT_DOUBLE_EQ(*c.roofline.step_overhead_s, 0.3e-3);
  EXPECT_DOUBLE_EQ(*c.roofline.seq_overhead_s, 45e-6);
  EXPECT_NE(
      scenario_error(base_scenario(), {"cost_model.seq_overhead_us=-1"}).find("seq_overhead_us"),
      std::string::npos);
  const SimulationResult slow = run(config_of(base_scenario(), {"cost_model.seq_overhead_us=500"}));
  const SimulationResult fast = run(config_of(base_scenario(), {"cost_model.seq_overhead_us=0"}));
  EXPECT_GT(slow.summary.tpot.mean_s, fast.summary.tpot.mean_s);
}

TEST(Scenario, AttentionAndExpertEfficienciesAreFractionsOfPeak) {
  const SimulationConfig c =
      config_of(base_scenario(), {"cost_model.attention_compute_efficiency=0.6",
                                  "cost_model.attention_memory_efficiency=0.9"});
  EXPECT_DOUBLE_EQ(*c.roofline.attention_compute_efficiency, 0.6);
  EXPECT_DOUBLE_EQ(*c.roofline.attention_memory_efficiency, 0.9);
  const SimulationConfig e = config_of(
      base_scenario(),
      {"cost_model.expert_compute_efficiency=0.2", "cost_model.expert_memory_efficiency=0.7"});
  EXPECT_DOUBLE_EQ(*e.roofline.expert_compute_efficiency, 0.2);
  EXPECT_DOUBLE_EQ(*e.roofline.expert_memory_efficiency, 0.7);
  for (const auto& [key, value] :
       std::vector<std::pair<std::string, std::string>>{{"attention_compute_efficiency", "0"},
                                                        {"attention_memory_efficiency", "1.5"},
                                                        {"expert_compute_efficiency", "-0.2"},
                                                        {"expert_memory_efficiency", "2"}}) {
    const std::string error = scenario_error(base_scenario(), {"cost_model." + key + "=" + value});
    EXPECT_NE(error.find("cost_model: " + key + " must be in (0, 1]"), std::string::npos) << error;
  }
  // Long prompts: the attention's share of a prefill grows with the prompt.
  const std::vector<std::string> long_prompts = {"workload.prompt_tokens=3500",
                                                 "workload.arrival.rate_qps=0.5"};
  std::vector<std::string> fast = long_prompts;
  fast.push_back("cost_model.attention_compute_efficiency=0.9");
  EXPECT_LT(run(config_of(base_scenario(), fast)).summary.ttft.mean_s,
            0.9 * run(config_of(base_scenario(), long_prompts)).summary.ttft.mean_s);
}

TEST(Scenario, WithoutAServiceBlockRequestsPassVllmsApiServer) {
  const SimulationConfig served = config_of(base_scenario());
  EXPECT_TRUE(served.service.enabled);
  EXPECT_EQ(served.service.frontend.station.workers, 1);
  EXPECT_DOUBLE_EQ(served.service.frontend.per_output_token_s, kVllmPerTokenS);
  EXPECT_DOUBLE_EQ(served.service.frontend.station.per_prompt_token_s, kVllmTokeniseS);
  EXPECT_FALSE(served.service.gateway.has_value());
  EXPECT_FALSE(config_of(base_scenario(), {"service=\"none\""}).service.enabled);

  // A block that leaves the frontend out, or some of its keys, keeps vLLM's values for them.
  const SimulationConfig gateway_only =
      config_of(base_scenario(), {"service={\"gateway\": {\"workers\": 2}}"});
  EXPECT_DOUBLE_EQ(gateway_only.service.frontend.per_output_token_s, kVllmPerTokenS);
  const SimulationConfig two_processes =
      config_of(base_scenario(), {"service={\"frontend\": {\"workers\": 2, \"cv\": 0}}"});
  EXPECT_EQ(two_processes.service.frontend.station.workers, 2);
  EXPECT_EQ(two_processes.service.frontend.station.cv, 0);
  EXPECT_DOUBLE_EQ(two_processes.service.frontend.station.per_prompt_token_s, kVllmTokeniseS);
}

TEST(Scenario, TheDefaultFrontendAddsItsCostsToTtftNotToTheEngine) {
  const SimulationResult served = run(config_of(base_scenario()));
  const SimulationResult alone = run(config_of(base_scenario(), {"service=\"none\""}));
  EXPECT_EQ(served.summary.completed, alone.summary.completed);
  EXPECT_GT(served.summary.ttft.mean_s, alone.summary.ttft.mean_s);
  // Intake alone is 1.5 ms + 1 us x 256 prompt tokens; the first token's output job follows.
  EXPECT_LT(served.summary.ttft.mean_s - alone.summary.ttft.mean_s, 0.02);
  EXPECT_NE(served.fingerprint, alone.fingerprint);
}

TEST(Scenario, OverridesReplaceAndAdd) {
  nlohmann::json j = base_scenario();
  apply_overrides(j,
                  {"engine.max_num_seqs=32", "workload.arrival.rate_qps=1.5", "model=Llama-2-13B"});
  EXPECT_EQ(j["engine"]["max_num_seqs"], 32);
  EXPECT_DOUBLE_EQ(j["workload"]["arrival"]["rate_qps"].get<double>(), 1.5);
  EXPECT_EQ(j["model"], "Llama-2-13B");
  EXPECT_THROW(apply_overrides(j, {"engine"}), ConfigError);
  EXPECT_THROW(apply_overrides(j, {"model.name=x"}), ConfigError);
}

// A command reads its scenario file and applies --set once: the Scenario keeps the JSON its
// config came from, overrides applied, for the run setup to record.
TEST(Scenario, KeepsTheJsonItWasReadFromWithItsOverrides) {
  const std::filesystem::path path =
      std::filesystem::temp_directory_path() / "servesim_scenario_kept_json.json";
  {
    std::ofstream out(path);
    out << base_scenario().dump();
  }
  const Scenario s = load_scenario(path.string(), {"engine.max_num_seqs=24"}, Catalog());
  std::filesystem::remove(path);
  nlohmann::json expected = base_scenario();
  expected["engine"]["max_num_seqs"] = 24;
  EXPECT_EQ(s.json, expected);
  EXPECT_EQ(s.config.engine.max_num_seqs, 24);
}

// Fuzz finding (fuzz_scenario): a value beyond a double is not valid JSON for nlohmann
// (out_of_range, not parse_error) and escaped as another exception type; it is a string now,
// which the key's own check then rejects.
TEST(Scenario, OverrideBeyondADoubleIsTakenAsAString) {
  nlohmann::json j = base_scenario();
  apply_overrides(j, {"engine.max_num_seqs=1e400"});
  EXPECT_EQ(j["engine"]["max_num_seqs"], "1e400");
  EXPECT_THROW(config_of(j), ConfigError);
}

// Fuzz finding (fuzz_scenario, CI of stop 27): an override value with a byte that is not UTF-8
// became a JSON string; the key's type check then printed it with dump(), which throws
// type_error on such bytes. The override is refused where it enters, and the line names it.
TEST(Scenario, OverrideThatIsNotUtf8IsOneLineNamingIt) {
  for (const std::string item : {"engine.max_num_seqs=8\xff\xff", "engine.max_num_\xffseqs=8"}) {
    nlohmann::json j = base_scenario();
    try {
      apply_overrides(j, {item});
      ADD_FAILURE() << "accepted an override that is not UTF-8";
    } catch (const ConfigError& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("engine.max_num_"), std::string::npos) << what;
      EXPECT_NE(what.find("not valid UTF-8"), std::string::npos) << what;
      EXPECT_EQ(what.find('\n'), std::string::npos) << what;
      EXPECT_NO_THROW((void)nlohmann::json(what).dump()) << "the message itself is UTF-8";
    }
    EXPECT_EQ(j, base_scenario()) << "a refused override leaves the scenario as it was";
  }
}

}  // namespace
}  // namespace servesim
