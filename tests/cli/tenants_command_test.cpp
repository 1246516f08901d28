// `servesim simulate` with service.tenants, as a user runs it: the bundled service-tenants
// scenario's diagnosis names the tenant its quota refuses and the tenant that waits, summary.json
// has the per-tenant table, requests.csv ends in a tenant column that `servesim compare` still
// reads, the text summary prints the tenants, and differing priorities under FCFS warn.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "cli_runner.h"

namespace servesim::testing {
namespace {

namespace fs = std::filesystem;

const std::string kScenario = SERVESIM_SOURCE_DIR "/configs/scenarios/service-tenants.json";

const nlohmann::json* finding(const nlohmann::json& run, const std::string& code,
                              const std::string& text_prefix) {
  for (const nlohmann::json& f : run["diagnosis"]) {
    if (f["code"] == code && f["text"].get<std::string>().rfind(text_prefix, 0) == 0) return &f;
  }
  return nullptr;
}

TEST(TenantsCommand, TheBundledScenarioNamesTheBatchQuotaAndTheWaitingTenant) {
  const CliResult r = run_servesim("simulate " + kScenario + " --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err.find("warning"), std::string::npos) << r.err;  // the policy is priority
  const nlohmann::json run = nlohmann::json::parse(r.out);
  const nlohmann::json* refused = finding(run, "tenant_refused", "tenant batch: ");
  ASSERT_NE(refused, nullptr) << run["diagnosis"].dump();
  EXPECT_NE((*refused)["text"].get<std::string>().find("its tokens_per_min limit"),
            std::string::npos);
  const nlohmann::json& tenants = run["tenants"];
  ASSERT_EQ(tenants.size(), 2u);
  EXPECT_EQ(tenants[1]["name"], "batch");
  EXPECT_EQ((*refused)["evidence"][0]["metric"], "tenants[batch].refused_by_limit.tokens_per_min");
  EXPECT_EQ((*refused)["evidence"][0]["value"], tenants[1]["refused_by_limit"]["tokens_per_min"]);
  EXPECT_GT(tenants[1]["refused_by_limit"]["tokens_per_min"].get<double>(),
            0.15 * tenants[1]["requests"].get<double>());
  // Served first, the interactive tenant's first tokens come far sooner than batch's.
  EXPECT_NE(finding(run, "tenant_slow", "tenant batch waits longest"), nullptr);
  EXPECT_LT(tenants[0]["ttft"]["p50_ms"].get<double>(),
            0.2 * tenants[1]["ttft"]["p50_ms"].get<double>());
  EXPECT_EQ(tenants[0]["priority"], 0);
  EXPECT_EQ(tenants[1]["priority"], 1);
}

TEST(TenantsCommand, UnderFcfsThePrioritiesWarnAndTheInteractiveTenantQueuesToo) {
  const CliResult r =
      run_servesim("simulate " + kScenario + " --json --set engine.scheduling_policy=fcfs");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("warning: service.tenants have different priorities but "
                       "engine.scheduling_policy is \"fcfs\""),
            std::string::npos)
      << r.err;
  const nlohmann::json run = nlohmann::json::parse(r.out);
  const nlohmann::json& t = run["tenants"];
  EXPECT_GT(t[0]["ttft"]["p50_ms"].get<double>(), 0.2 * t[1]["ttft"]["p50_ms"].get<double>());
}

TEST(TenantsCommand, RequestsCsvEndsInATenantColumnThatCompareStillReads) {
  const fs::path dir = fs::temp_directory_path() / "servesim_tenants_out";
  fs::remove_all(dir);
  const CliResult r = run_servesim("simulate " + kScenario +
                                   " --set workload.num_requests=200 --out " + dir.string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* s : {"tenants        prio", "interactive", "batch"}) {
    EXPECT_NE(r.out.find(s), std::string::npos) << s << "\n" << r.out;
  }
  std::ifstream csv(dir / "requests.csv");
  std::string header, row;
  std::getline(csv, header);
  EXPECT_TRUE(header.ends_with(",attempts,retry_s,decode_queue_s,kv_transfer_s,tenant")) << header;
  int rows = 0, interactive = 0;
  while (std::getline(csv, row)) {
    ++rows;
    const std::string tenant = row.substr(row.rfind(',') + 1);
    EXPECT_TRUE(tenant == "interactive" || tenant == "batch") << row;
    interactive += tenant == "interactive";
  }
  EXPECT_EQ(rows, 200);
  EXPECT_GT(interactive, 10);
  const nlohmann::json summary = nlohmann::json::parse(std::ifstream(dir / "summary.json"));
  EXPECT_EQ(summary["tenants"].size(), 2u);
  const CliResult c = run_servesim("compare " + dir.string() + " " + dir.string() + " --json");
  EXPECT_EQ(c.exit_code, 0) << c.err;
  fs::remove_all(dir);
}

TEST(TenantsCommand, APoolAddsAPoolColumnAndAStationRow) {
  const fs::path dir = fs::temp_directory_path() / "servesim_pool_out";
  fs::remove_all(dir);
  const CliResult r = run_servesim("simulate " SERVESIM_SOURCE_DIR
                                   "/configs/scenarios/agent-pool-shared.json "
                                   "--set workload.duration_s=60 --out " +
                                   dir.string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("  pool shared               64"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("the pool wait"), std::string::npos) << r.out;
  std::ifstream csv(dir / "requests.csv");
  std::string header, row;
  std::getline(csv, header);
  EXPECT_TRUE(header.ends_with(",kv_transfer_s,pool_s,tenant")) << header;
  double waited_s = 0;
  while (std::getline(csv, row)) {
    const size_t tenant_comma = row.rfind(',');
    const size_t pool_comma = row.rfind(',', tenant_comma - 1);
    const std::string pool = row.substr(pool_comma + 1, tenant_comma - pool_comma - 1);
    if (!pool.empty()) waited_s += std::stod(pool);
  }
  EXPECT_GT(waited_s, 1.0);  // the spike's calls wait for the 64 connections
  const nlohmann::json summary = nlohmann::json::parse(std::ifstream(dir / "summary.json"));
  EXPECT_GT(summary["summary"]["where_time_went"]["segments"]["pool"]["mean_ms"].get<double>(), 0);
  fs::remove_all(dir);
}

TEST(TenantsCommand, WithoutTenantsRequestsCsvKeepsItsColumns) {
  const fs::path dir = fs::temp_directory_path() / "servesim_no_tenants_out";
  fs::remove_all(dir);
  const CliResult r = run_servesim("simulate " SERVESIM_SOURCE_DIR
                                   "/configs/scenarios/service-rate-limit.json "
                                   "--set workload.num_requests=50 --out " +
                                   dir.string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::ifstream csv(dir / "requests.csv");
  std::string header;
  std::getline(csv, header);
  EXPECT_TRUE(header.ends_with(",attempts,retry_s,decode_queue_s,kv_transfer_s")) << header;
  const nlohmann::json summary = nlohmann::json::parse(std::ifstream(dir / "summary.json"));
  EXPECT_FALSE(summary.contains("tenants"));
  EXPECT_EQ(r.out.find("tenants "), std::string::npos);
  fs::remove_all(dir);
}

TEST(TenantsCommand, BadTenantsExitWithOneLineNamingTheKey) {
  const CliResult r = run_servesim("simulate " + kScenario +
                                   " --set service.tenants='[{\"name\": \"a\", \"share\": 0.5}]'");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("service.tenants: the shares sum to 0.5; they must sum to 1"),
            std::string::npos)
      << r.err;
}

}  // namespace
}  // namespace servesim::testing
