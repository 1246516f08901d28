// summary.json's "setup" record and the table's one-line header: every key two runs are
// compared by, resolved engine flags, the scenario's blocks as given, a workload file read in.
#include "sim/run/run_setup.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "models/catalog.h"
#include "models/config_error.h"
#include "sim/core/observer.h"
#include "sim/run/simulation.h"
#include "sim/scenario/scenario.h"
#include "sim/service/vllm_frontend.h"

namespace servesim {
namespace {

nlohmann::json scenario_json() {
  return nlohmann::json::parse(R"({
    "name": "setup-test",
    "model": "Llama-2-7B",
    "gpu": "A100-80GB",
    "engine": {"max_model_len": 4096, "max_num_seqs": 64},
    "workload": {"arrival": {"type": "stepped", "steps": [1, 2], "step_duration_s": 10},
                 "prompt_tokens": 256, "output_tokens": 32},
    "slo": {"ttft_s": 0.5},
    "metrics": {"step_warmup_s": 2},
    "seed": 7
  })");
}

RunSetup setup_for(const nlohmann::json& j, const std::string& base_dir = "") {
  return RunSetup{"setup-test", j, base_dir, "0.1.0", "abc1234", 0.05};
}

TEST(RunSetup, RecordsEverythingTwoRunsAreComparedBy) {
  const nlohmann::json j = scenario_json();
  const Simulation sim(parse_scenario(j, "", "test", Catalog()).config);
  const nlohmann::json s = setup_json(sim, setup_for(j));
  for (const char* key :
       {"servesim_version", "git_revision", "scenario", "model", "gpu", "parallel", "engine",
        "cost_model", "service", "workload", "slo", "metrics", "max_error_rate", "seed"}) {
    EXPECT_TRUE(s.contains(key)) << key;
  }
  EXPECT_EQ(s["servesim_version"], "0.1.0");
  EXPECT_EQ(s["model"]["name"], "Llama-2-7B");
  EXPECT_EQ(s["model"]["dtype"], "bf16");
  EXPECT_EQ(s["gpu"]["name"], sim.config().gpu.name);
  EXPECT_EQ(s["parallel"]["tensor_parallel_size"], 1);
  EXPECT_EQ(s["parallel"]["gpus"], 1);
  EXPECT_EQ(s["engine"]["mirrors"], "vLLM V1");
  EXPECT_EQ(s["engine"]["max_num_seqs"], 64);
  // Flags the scenario left unset are recorded as resolved, not as absent.
  EXPECT_EQ(s["engine"]["max_num_batched_tokens"], sim.scheduler_config().max_num_batched_tokens);
  EXPECT_GT(s["engine"]["max_num_batched_tokens"].get<int>(), 0);
  EXPECT_EQ(s["engine"]["enable_prefix_caching"], true);
  EXPECT_EQ(s["engine"]["batching"], "continuous");
  // No service block: served through vLLM's API server, recorded with its values.
  EXPECT_EQ(s["service"]["default"], "vLLM API server");
  EXPECT_EQ(s["service"]["frontend"]["per_output_token_s"], kVllmPerTokenS);
  nlohmann::json alone = j;
  alone["service"] = "none";
  const Simulation engine_only(parse_scenario(alone, "", "test", Catalog()).config);
  EXPECT_EQ(setup_json(engine_only, setup_for(alone))["service"], "none");
  EXPECT_EQ(s["workload"], j["workload"]);
  EXPECT_EQ(s["slo"], j["slo"]);
  EXPECT_EQ(s["metrics"]["step_warmup_s"], 2);
  EXPECT_EQ(s["max_error_rate"], 0.05);
  EXPECT_EQ(s["seed"], 7);
}

TEST(RunSetup, AServiceBlockIsRecordedAsGiven) {
  nlohmann::json j = scenario_json();
  j["service"] = {{"network", {{"rtt_s", 0.02}}}};
  const Simulation sim(parse_scenario(j, "", "test", Catalog()).config);
  EXPECT_EQ(setup_json(sim, setup_for(j))["service"], j["service"]);
  EXPECT_NE(setup_line(sim, setup_for(j)).find("service network + frontend"), std::string::npos);
}

// A what-if on the roofline (an efficiency, an overhead) is part of what two runs differ by.
TEST(RunSetup, TheRooflinesOptionsAreRecordedAsGiven) {
  nlohmann::json j = scenario_json();
  const Simulation plain(parse_scenario(j, "", "test", Catalog()).config);
  EXPECT_EQ(setup_json(plain, setup_for(j))["cost_model"], nlohmann::json({{"type", "roofline"}}));
  j["cost_model"] = {{"expert_compute_efficiency", 0.2}, {"step_overhead_ms", 2}};
  const Simulation what_if(parse_scenario(j, "", "test", Catalog()).config);
  EXPECT_EQ(
      setup_json(what_if, setup_for(j))["cost_model"],
      nlohmann::json(
          {{"type", "roofline"}, {"expert_compute_efficiency", 0.2}, {"step_overhead_ms", 2}}));
}

TEST(RunSetup, AWorkloadFileIsReadIn) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / "servesim_run_setup";
  std::filesystem::create_directories(dir);
  const nlohmann::json workload = scenario_json()["workload"];
  std::ofstream(dir / "w.json") << workload.dump();
  nlohmann::json j = scenario_json();
  j["workload"] = "w.json";
  const Simulation sim(parse_scenario(j, dir.string(), "test", Catalog()).config);
  const nlohmann::json s = setup_json(sim, setup_for(j, dir.string()));
  EXPECT_EQ(s["workload"]["file"], "w.json");
  EXPECT_EQ(s["workload"]["arrival"], workload["arrival"]);
  std::filesystem::remove_all(dir);
}

TEST(RunSetup, OneLineHeader) {
  const nlohmann::json j = scenario_json();
  const Simulation sim(parse_scenario(j, "", "test", Catalog()).config);
  const std::string line = setup_line(sim, setup_for(j));
  EXPECT_EQ(line.find('\n'), std::string::npos);
  EXPECT_EQ(line, "setup-test: Llama-2-7B (bf16) on 1 x " + sim.config().gpu.name +
                      " (TP 1, PP 1, DP 1), vLLM V1 engine, continuous batching, service vLLM "
                      "API server (default), seed 7, servesim 0.1.0");
}

TEST(RunSetup, AsynchronousSchedulingIsNamedInTheHeaderAndTheSetup) {
  nlohmann::json j = scenario_json();
  j["engine"]["async_scheduling"] = true;
  const Simulation sim(parse_scenario(j, "", "test", Catalog()).config);
  EXPECT_NE(setup_line(sim, setup_for(j)).find("continuous batching with async scheduling, "),
            std::string::npos);
  EXPECT_EQ(setup_json(sim, setup_for(j))["engine"]["async_scheduling"], true);
  EXPECT_EQ(setup_json(sim, setup_for(j))["engine"]["async_host_overlap"], 0.0);
  j["engine"]["async_host_overlap"] = 0.25;
  const Simulation partial(parse_scenario(j, "", "test", Catalog()).config);
  EXPECT_EQ(setup_json(partial, setup_for(j))["engine"]["async_host_overlap"], 0.25);

  nlohmann::json split = scenario_json();
  split["disaggregation"] = {
      {"prefill", {{"instances", 1}}},
      {"decode", {{"instances", 1}, {"engine", {{"async_scheduling", true}}}}}};
  const Simulation disaggregated(parse_scenario(split, "", "test", Catalog()).config);
  EXPECT_NE(setup_line(disaggregated, setup_for(split))
                .find("engine (async scheduling on the decode instances), "),
            std::string::npos);
}

// The graphs the engine runs are part of the setup a run records: the release's default, the
// deployment's cudagraph_mode, or none with enforce_eager; a mode vLLM does not name is refused.
TEST(RunSetup, DisablingTheCustomAllReduceIsRecordedAndSlowsATensorParallelDecode) {
  nlohmann::json j = scenario_json();
  j["parallel"]["tensor_parallel_size"] = 2;
  Simulation custom(parse_scenario(j, "", "test", Catalog()).config);
  EXPECT_EQ(setup_json(custom, setup_for(j))["engine"]["disable_custom_all_reduce"], false);
  j["engine"]["disable_custom_all_reduce"] = true;
  Simulation nccl(parse_scenario(j, "", "test", Catalog()).config);
  EXPECT_EQ(setup_json(nccl, setup_for(j))["engine"]["disable_custom_all_reduce"], true);
  NullObserver observer;
  const double custom_tpot = custom.run(observer).summary.tpot.mean_s;
  const double nccl_tpot = nccl.run(observer).summary.tpot.mean_s;
  // Each decode step's all-reduces move from ~5 us to NCCL's 32 us each.
  EXPECT_GT(nccl_tpot, custom_tpot * 1.05) << nccl_tpot << " " << custom_tpot;
  j["engine"]["disable_custom_all_reduce"] = "yes";
  EXPECT_THROW(parse_scenario(j, "", "test", Catalog()), ConfigError);
}

TEST(RunSetup, TheCudaGraphModeIsRecordedAndAnUnknownOneRefused) {
  auto mode_of = [](const nlohmann::json& j) {
    const Simulation sim(parse_scenario(j, "", "test", Catalog()).config);
    return setup_json(sim, setup_for(j))["engine"]["cudagraph_mode"].get<std::string>();
  };
  nlohmann::json j = scenario_json();
  EXPECT_EQ(mode_of(j), "FULL_AND_PIECEWISE");
  j["engine"]["vllm_version"] = "0.10";
  EXPECT_EQ(mode_of(j), "PIECEWISE");
  j["engine"]["cudagraph_mode"] = "FULL_DECODE_ONLY";
  EXPECT_EQ(mode_of(j), "FULL_DECODE_ONLY");
  nlohmann::json eager = scenario_json();
  eager["engine"]["enforce_eager"] = true;
  EXPECT_EQ(mode_of(eager), "NONE");
  j["engine"]["cudagraph_mode"] = "full_decode_only";
  try {
    parse_scenario(j, "", "test", Catalog());
    ADD_FAILURE() << "accepted a lower-case mode";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("engine.cudagraph_mode"), std::string::npos) << e.what();
  }
  eager["engine"]["cudagraph_mode"] = "PIECEWISE";
  EXPECT_THROW(Simulation(parse_scenario(eager, "", "test", Catalog()).config), ConfigError);
}

// The overlapping share of host work is a fraction, and means something only under
// asynchronous scheduling: anything else is one line naming the key.
TEST(RunSetup, AsyncHostOverlapOutsideItsRangeOrWithoutAsyncSchedulingIsRefused) {
  auto message = [](const nlohmann::json& j) {
    try {
      parse_scenario(j, "", "test", Catalog());
    } catch (const ConfigError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  nlohmann::json j = scenario_json();
  j["engine"]["async_host_overlap"] = 0.5;
  EXPECT_NE(message(j).find("async_host_overlap applies only with async_scheduling true"),
            std::string::npos)
      << message(j);
  j["engine"]["async_scheduling"] = true;
  EXPECT_EQ(message(j), "accepted");
  for (const double bad : {-0.1, 1.5}) {
    j["engine"]["async_host_overlap"] = bad;
    EXPECT_NE(message(j).find("async_host_overlap must be a fraction in [0, 1]"), std::string::npos)
        << message(j);
  }
  j["engine"]["async_host_overlap"] = "half";
  EXPECT_NE(message(j).find("async_host_overlap"), std::string::npos) << message(j);
}

}  // namespace
}  // namespace servesim
