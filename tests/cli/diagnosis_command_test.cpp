// The diagnosis names the bottleneck planted in each bundled scenario, in summary.json's
// "diagnosis" and in the table's "why" block (sim/metrics/diagnosis.h has the rules).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "cli_runner.h"

namespace servesim::testing {
namespace {

nlohmann::json simulate_json(const std::string& scenario, const std::string& flags = "") {
  const CliResult r = run_servesim("simulate " SERVESIM_SOURCE_DIR "/configs/scenarios/" +
                                   scenario + ".json --json " + flags);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return nlohmann::json::parse(r.out);
}

std::set<std::string> codes(const nlohmann::json& run) {
  std::set<std::string> out;
  for (const nlohmann::json& f : run["diagnosis"]) out.insert(f["code"].get<std::string>());
  return out;
}

const nlohmann::json& finding(const nlohmann::json& run, const std::string& code) {
  for (const nlohmann::json& f : run["diagnosis"]) {
    if (f["code"] == code) return f;
  }
  ADD_FAILURE() << "no " << code << " in " << run["diagnosis"].dump();
  static const nlohmann::json kNone = {{"text", ""}, {"evidence", nlohmann::json::array()}};
  return kNone;
}

double cited(const nlohmann::json& f, const std::string& metric) {
  for (const nlohmann::json& e : f["evidence"]) {
    if (e["metric"] == metric) return e["value"].get<double>();
  }
  ADD_FAILURE() << "no " << metric << " cited in " << f.dump();
  return 0;
}

TEST(DiagnosisCommand, RagServiceSaysTheModelIsUnderHalfAndRetrievalDominates) {
  const nlohmann::json run = simulate_json("service-rag");
  EXPECT_EQ(codes(run), std::set<std::string>{"model_share_small"});
  const nlohmann::json& f = finding(run, "model_share_small");
  EXPECT_NEAR(cited(f, "model_share_of_e2e"), 0.42, 0.03);
  EXPECT_GT(cited(f, "summary.where_time_went.segments.pre_model.share_of_e2e"), 0.5);
}

TEST(DiagnosisCommand, OneCoreGatewayIsSaturatedWhileTheGpuIsBusy) {
  const nlohmann::json run = simulate_json("service-gateway-saturated");
  const nlohmann::json& f = finding(run, "station_saturated");
  EXPECT_EQ(f["text"].get<std::string>().rfind("gateway is saturated", 0), 0u) << f["text"];
  EXPECT_GE(cited(f, "service.stations[gateway].utilisation"), 0.95);
  EXPECT_GT(cited(f, "service.stations[gateway].mean_queue"), 100);
  EXPECT_GE(cited(f, "gpu_busy"), 0.9);
  EXPECT_EQ(codes(run).count("healthy"), 0u);
}

TEST(DiagnosisCommand, FourGatewayCoresAreNotSaturated) {
  const nlohmann::json run =
      simulate_json("service-gateway-saturated", "--set service.gateway.workers=4");
  EXPECT_EQ(codes(run).count("station_saturated"), 0u) << run["diagnosis"].dump();
}

TEST(DiagnosisCommand, BurstIntoARateLimitNamesTheRefusalsAndTheTail) {
  const nlohmann::json run = simulate_json("service-rate-limit");
  const nlohmann::json& f = finding(run, "rate_limited");
  EXPECT_EQ(cited(f, "summary.where_time_went.errors_by_cause.rate_limited"),
            run["summary"]["where_time_went"]["errors_by_cause"]["rate_limited"].get<double>());
  EXPECT_EQ(codes(run).count("ttft_tail"), 1u);
}

TEST(DiagnosisCommand, MaxNumSeqsHoldsRequestsBackWhileKvIsFree) {
  const nlohmann::json run = simulate_json("max-num-seqs");
  const nlohmann::json& f = finding(run, "max_num_seqs_full");
  EXPECT_EQ(cited(f, "replicas.max_num_seqs"), 64);
  EXPECT_LT(cited(f, "replicas.peak_kv_usage"), 0.5);
  EXPECT_EQ(codes(run).count("kv_cache_full"), 0u);
  EXPECT_EQ(run["replicas"][0]["peak_running"], 64);
}

TEST(DiagnosisCommand, SteppedLoadFindsTheSeqCapOfItsLastStep) {
  // 64 clients against max_num_seqs 32 in the last of seven steps: about a seventh of the run.
  const nlohmann::json run = simulate_json("stepped-knee");
  const nlohmann::json& f = finding(run, "max_num_seqs_full");
  EXPECT_EQ(cited(f, "replicas.max_num_seqs"), 32);
  EXPECT_NE(finding(run, "engine_queueing")["text"].get<std::string>().find("by max_num_seqs"),
            std::string::npos);
}

TEST(DiagnosisCommand, LongContextPrefillIsTheFirstTokensWait) {
  EXPECT_EQ(codes(simulate_json("long-context")), std::set<std::string>{"long_prefill"});
}

TEST(DiagnosisCommand, QuickstartIsHealthy) {
  const nlohmann::json run = simulate_json("quickstart");
  EXPECT_EQ(codes(run), std::set<std::string>{"healthy"});
}

TEST(DiagnosisCommand, TablePrintsWhyAfterWhereTheTimeWentAndTheStations) {
  const CliResult r =
      run_servesim("simulate " SERVESIM_SOURCE_DIR "/configs/scenarios/service-rag.json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const size_t where = r.out.find("where the time went");
  const size_t stations = r.out.find("  stations ");
  const size_t why = r.out.find("\n  why\n  - model_share_small: the model is ");
  ASSERT_NE(why, std::string::npos) << r.out;
  EXPECT_LT(where, why);
  EXPECT_LT(stations, why);
}

}  // namespace
}  // namespace servesim::testing
