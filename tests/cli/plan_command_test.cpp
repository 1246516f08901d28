// `servesim plan` as a user runs it, on spaces small enough to answer in a second: the ranked
// table with the winner's vllm serve line, JSON, --pareto, --out files, the infeasible answer
// (exit 1) and one-line errors (exit 2).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <utility>
#include <vector>

#include "cli_runner.h"

namespace servesim::testing {
namespace {

const std::string kPlan = "plan " SERVESIM_SOURCE_DIR
                          "/configs/scenarios/quickstart.json --target-qps 20 --gpus "
                          "A100-80GB,H100 --tp 1 --requests 300 --slo ttft:p99=0.5 "
                          "--slo tpot:p99=50ms";

TEST(PlanCommand, PrintsTheRankedTableAndTheWinnersVllmServeLine) {
  const CliResult r = run_servesim(kPlan);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* s : {"rank", "$/hour", "TTFT99ms", "headroom", "limit", "winner: 1 x H100-SXM",
                        "vllm serve meta-llama/Llama-2-7b-hf --tensor-parallel-size 1"}) {
    EXPECT_NE(r.out.find(s), std::string::npos) << s << "\n" << r.out;
  }
}

TEST(PlanCommand, JsonParetoAndOutFiles) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / "servesim_plan_out";
  std::filesystem::remove_all(dir);
  const CliResult r = run_servesim(kPlan + " --json --threads 2 --out " + dir.string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_TRUE(j["feasible"].get<bool>());
  EXPECT_EQ(j["candidates"][0]["gpu"], "H100-SXM");
  EXPECT_EQ(j["candidates"].size(), 2u);
  for (const char* f : {"plan.csv", "plan.json", "pareto.csv"}) {
    EXPECT_TRUE(std::filesystem::exists(dir / f)) << f;
  }
  const CliResult one = run_servesim(kPlan + " --json --threads 1");
  EXPECT_EQ(one.out, r.out);

  const CliResult pareto = run_servesim(kPlan + " --pareto");
  ASSERT_EQ(pareto.exit_code, 0) << pareto.err;
  EXPECT_EQ(pareto.out.rfind("rank,gpu,tp,pp,max_num_seqs,load,tokens_per_s_per_user,", 0), 0u)
      << pareto.out;
}

// Ctrl-C two seconds into a plan far longer than that (560 candidates, one thread): exit 130, and
// --out holds the ranking of what was searched, the candidates not reached marked interrupted.
TEST(PlanCommand, CtrlCWritesWhatWasSearchedMarkedInterrupted) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / "servesim_plan_sigint";
  std::filesystem::remove_all(dir);
  const CliResult r =
      run_servesim("plan " SERVESIM_SOURCE_DIR
                   "/configs/scenarios/quickstart.json --target-qps 20 --tp 1,2,4,8 --pp 1,2 "
                   "--max-num-seqs 16,32,64,128,256 --search-all --requests 4000 --threads 1 "
                   "--slo ttft:p99=0.5 --out " +
                   dir.string() + " 2>&1 & pid=$!; sleep 2; kill -INT $pid; wait $pid");
  EXPECT_EQ(r.exit_code, 130) << r.err;
  std::ifstream in(dir / "plan.json");
  const nlohmann::json j = nlohmann::json::parse(in);
  EXPECT_EQ(j["interrupted"], true);
  size_t interrupted = 0;
  for (const nlohmann::json& c : j["candidates"]) interrupted += c["status"] == "interrupted";
  EXPECT_GT(interrupted, 0u);
  EXPECT_NE(r.out.find("interrupted (Ctrl-C): "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("interrupted: the plan ranks the candidates searched before Ctrl-C"),
            std::string::npos)
      << r.out;
  std::filesystem::remove_all(dir);
}

TEST(PlanCommand, NothingFeasibleSaysSoAndExits1) {
  const CliResult r = run_servesim(kPlan + " --slo itl:p99=1ms");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.out.find("No candidate meets the SLOs within the limits"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("would need:"), std::string::npos) << r.out;
}

// Without a scenario file: --model, --input-len, --output-len (and --qps for --target-qps)
// build it in memory; the same scenario written to a file prints the same plan.
TEST(PlanCommand, FlagsDescribeTheWorkloadWithoutAScenarioFile) {
  const std::string search =
      " --gpus A100-80GB,H100 --tp 1 --requests 300 --slo ttft:p99=0.5 --slo tpot:p99=50ms";
  const CliResult flags = run_servesim(
      "plan --model Llama-2-7B --input-len 512 --output-len 128 --arrival poisson --qps 20" +
      search);
  ASSERT_EQ(flags.exit_code, 0) << flags.err;
  EXPECT_NE(flags.out.find("plan: Llama-2-7B (512-token prompts, 128-token answers, poisson)"),
            std::string::npos)
      << flags.out;
  EXPECT_NE(flags.out.find("winner: 2 x A100-80GB-SXM"), std::string::npos) << flags.out;

  const std::filesystem::path file =
      std::filesystem::temp_directory_path() / "servesim_plan_from_flags.json";
  std::ofstream(file) << R"({"name": "512-token prompts, 128-token answers, poisson",
    "model": "Llama-2-7B", "gpu": "A100-80GB",
    "workload": {"arrival": {"type": "poisson", "rate_qps": 20}, "prompt_tokens": 512,
                 "output_tokens": 128, "num_requests": 300}})";
  const CliResult scenario = run_servesim("plan " + file.string() + " --target-qps 20" + search);
  std::filesystem::remove(file);
  ASSERT_EQ(scenario.exit_code, 0) << scenario.err;
  EXPECT_EQ(flags.out, scenario.out);
}

TEST(PlanCommand, MissingOrConflictingWorkloadFlagsAreOneLineErrors) {
  const std::string slo = " --target-qps 5 --slo ttft:p99=1";
  for (const auto& [args, fragment] : std::vector<std::pair<std::string, std::string>>{
           {"plan" + slo, "no workload: give a scenario file, or --model NAME"},
           {"plan --input-len 512 --output-len 128" + slo, "no workload"},
           {"plan --model Llama-2-7B --input-len 512" + slo, "--model needs --input-len N and "},
           {"plan --model Llama-2-7B --input-len 0 --output-len 8" + slo, "--input-len must be"},
           {"plan --model Llama-2-7B --input-len 8 --output-len 8 --arrival bursty" + slo,
            "--arrival 'bursty': use poisson, constant or gamma:CV"},
           {"plan --model Llama-2-7B --input-len 8 --output-len 8 --arrival poisson "
            "--target-concurrency 4 --slo ttft:p99=1",
            "drop --arrival"},
           {"plan " SERVESIM_SOURCE_DIR "/configs/scenarios/quickstart.json --model Llama-2-7B" +
                slo,
            "replace a scenario file"},
           {"plan --model NoSuchModel --input-len 8 --output-len 8" + slo, "NoSuchModel"}}) {
    const CliResult r = run_servesim(args);
    EXPECT_EQ(r.exit_code, 2) << args;
    EXPECT_EQ(r.err.rfind("error: ", 0), 0u) << args << ": " << r.err;
    EXPECT_NE(r.err.find(fragment), std::string::npos) << args << ": " << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
}

// A scenario with a disaggregation block used to fail ("data_parallel_size must be 1 with
// disaggregation"); now its P:D is searched against aggregated replicas.
TEST(PlanCommand, ADisaggregatedScenarioSearchesBothFamiliesAndPrintsTheRolesLines) {
  const CliResult r = run_servesim("plan " SERVESIM_SOURCE_DIR
                                   "/configs/scenarios/disagg-long-prompts.json --target-qps 3 "
                                   "--gpus H100-SXM --tp 1,2 --requests 300 --top 1 --threads 1");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* s : {"| 2P TP1 + 1D TP2", "winner: 1 group of 2P TP1 + 1D TP2 on H100-SXM",
                        "  prefill: vllm serve meta-llama/Llama-3.1-8B --tensor-parallel-size 1",
                        "  decode:  vllm serve meta-llama/Llama-3.1-8B --tensor-parallel-size 2",
                        "best aggregated: 5 x H100-SXM replica(s) of TP 2"}) {
    EXPECT_NE(r.out.find(s), std::string::npos) << s << "\n" << r.out;
  }
  const CliResult only = run_servesim("plan " SERVESIM_SOURCE_DIR
                                      "/configs/scenarios/quickstart.json --target-qps 4 --gpus "
                                      "H100-SXM --tp 1 --requests 100 --pd 1:1,2:1 "
                                      "--no-aggregated --json");
  ASSERT_EQ(only.exit_code, 0) << only.err;
  const nlohmann::json j = nlohmann::json::parse(only.out);
  EXPECT_EQ(j["candidates_enumerated"], 2);
  for (const nlohmann::json& c : j["candidates"]) EXPECT_TRUE(c.contains("disaggregation"));
}

TEST(PlanCommand, BadInputsAreOneLineErrorsWithStatus2) {
  const std::string base = "plan " SERVESIM_SOURCE_DIR "/configs/scenarios/quickstart.json ";
  for (const std::string& args :
       {base + "--target-qps 5 --slo latency:p99=1", base + "--slo ttft:p99=1",
        base + "--target-qps 5 --target-concurrency 4", base + "--target-qps 5 --tp 4 --max-gpus 2",
        base + "--target-qps 5 --tp 3", base + "--target-qps 5 --pd 1",
        base + "--target-qps 5 --pd 0:1", base + "--target-qps 5 --pd none,1:1",
        base + "--target-qps 5 --pd 1:x", base + "--target-qps 5 --no-aggregated",
        base + "--target-qps 5 --prefill-tp 2", base + "--target-qps 5 --num-speculative-tokens 3",
        base + "--target-qps 5 --num-speculative-tokens 17",
        base + "--target-qps 5 --num-speculative-tokens x", base + "--target-qps 5 --tp x",
        base + "--target-qps 5 --prefill-gpus L40S",
        base + "--target-qps 5 --pd 1:1 --decode-gpus ,", base + "--target-qps 5 --no-such-flag"}) {
    const CliResult r = run_servesim(args);
    EXPECT_EQ(r.exit_code, 2) << args;
    EXPECT_EQ(r.err.rfind("error: ", 0), 0u) << args << ": " << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
}

}  // namespace
}  // namespace servesim::testing
