// RunComparison: relative differences against the first run, missing metrics kept apart from
// zeros, the --max-error check, and the table and JSON the CLI prints.
#include "sim/metrics/run_comparison.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <limits>
#include <string>

#include "models/config_error.h"

namespace servesim {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

RunFolder run(const std::string& path, const nlohmann::json& summary) {
  RunFolder r;
  r.path = path;
  r.summary = summary;
  r.setup = {{"scenario", "s"}, {"model", "m"}};
  return r;
}

const ComparedMetric& metric(const RunComparison& c, std::string_view key) {
  for (const ComparedMetric& m : c.metrics) {
    if (m.spec->key == key) return m;
  }
  throw std::logic_error("no metric " + std::string(key));
}

std::string printed(const RunComparison& c) {
  std::FILE* f = std::tmpfile();
  print_comparison(f, c);
  std::rewind(f);
  std::string text;
  for (int ch; (ch = std::fgetc(f)) != EOF;) text += static_cast<char>(ch);
  std::fclose(f);
  return text;
}

// A reference, a run 10% slower on TTFT and without ITL, and one with no successful request.
std::vector<RunFolder> three_runs() {
  return {run("sim", {{"completed", 100},
                      {"request_throughput_per_s", 2.0},
                      {"error_rate", 0.0},
                      {"ttft", {{"p50_ms", 40.0}, {"p99_ms", 80.0}}},
                      {"itl", {{"p50_ms", 10.0}}}}),
          run("measured", {{"completed", 100},
                           {"request_throughput_per_s", 1.95},
                           {"error_rate", 0.0},
                           {"ttft", {{"p50_ms", 44.0}, {"p99_ms", 80.0}}},
                           {"itl", nullptr}}),
          run("broken", {{"completed", 0},
                         {"request_throughput_per_s", 0.0},
                         {"error_rate", 1.0},
                         {"ttft", {{"p50_ms", nullptr}}}})};
}

TEST(RunComparisonTest, RelativeDifference) {
  EXPECT_DOUBLE_EQ(relative_difference_pct(110, 100), 10.0);
  EXPECT_DOUBLE_EQ(relative_difference_pct(90, 100), -10.0);
  EXPECT_DOUBLE_EQ(relative_difference_pct(-90, -100), 10.0);
  EXPECT_DOUBLE_EQ(relative_difference_pct(0, 0), 0.0);
  EXPECT_EQ(relative_difference_pct(1, 0), kInf);
  EXPECT_EQ(relative_difference_pct(-1, 0), -kInf);
  EXPECT_TRUE(std::isnan(relative_difference_pct(std::nan(""), 1)));
  EXPECT_TRUE(std::isnan(relative_difference_pct(1, std::nan(""))));
}

TEST(RunComparisonTest, ValuesInTheirUnitsWithDifferencesAgainstTheFirst) {
  const std::vector<RunFolder> runs = three_runs();
  const RunComparison c = compare_runs(runs);
  EXPECT_EQ(c.runs.size(), 3u);
  EXPECT_EQ(c.metrics.size(), compared_metric_specs().size());
  const ComparedMetric& ttft = metric(c, "ttft_p50");
  EXPECT_DOUBLE_EQ(ttft.values[1], 44.0);
  EXPECT_DOUBLE_EQ(ttft.difference_pct[0], 0.0);
  EXPECT_NEAR(ttft.difference_pct[1], 10.0, 1e-12);
  EXPECT_TRUE(std::isnan(ttft.values[2]));  // no successful request: missing, not 0
  EXPECT_TRUE(std::isnan(metric(c, "itl_p50").values[1]));
  EXPECT_DOUBLE_EQ(metric(c, "error_rate").values[2], 100.0);  // percent
  EXPECT_EQ(metric(c, "error_rate").difference_pct[2], kInf);
  EXPECT_DOUBLE_EQ(metric(c, "completed").difference_pct[2], -100.0);
}

TEST(RunComparisonTest, MetricsPickedByKeyKeepTableOrderAndUnknownKeysAreNamed) {
  const std::vector<RunFolder> runs = three_runs();
  const RunComparison c = compare_runs(runs, {"ttft_p99", "completed"});
  ASSERT_EQ(c.metrics.size(), 2u);
  EXPECT_EQ(c.metrics[0].spec->key, "completed");
  EXPECT_EQ(c.metrics[1].spec->key, "ttft_p99");
  try {
    compare_runs(runs, {"ttft_p42"});
    FAIL();
  } catch (const ConfigError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("--metrics: unknown metric 'ttft_p42'; known: requests,completed,"),
              std::string::npos)
        << what;
    EXPECT_NE(what.find("goodput_requests_per_s"), std::string::npos) << what;
  }
}

TEST(RunComparisonTest, MaxErrorFlagsWhatDriftsAndMissingOnlyWhenAskedFor) {
  const std::vector<RunFolder> runs = three_runs();
  const std::vector<RunFolder> two(runs.begin(), runs.begin() + 2);
  const RunComparison c = compare_runs(two);
  EXPECT_TRUE(check_max_error(c, 10.0, false).empty());
  const std::vector<ErrorLimitBreach> tight = check_max_error(c, 5.0, false);
  ASSERT_EQ(tight.size(), 1u);  // throughput -2.5% is within; goodput is absent in both
  EXPECT_EQ(tight[0].metric, "ttft_p50");
  EXPECT_EQ(tight[0].run, 1u);
  EXPECT_NEAR(tight[0].difference_pct, 10.0, 1e-12);
  EXPECT_EQ(describe_breach(c, tight[0], 5.0),
            "ttft_p50: measured has 44.00 ms, sim 40.00 ms: +10.0%, beyond --max-error 5%");

  const RunComparison named = compare_runs(two, {"itl_p50"});
  EXPECT_TRUE(check_max_error(named, 10.0, false).empty());
  const std::vector<ErrorLimitBreach> missing = check_max_error(named, 10.0, true);
  ASSERT_EQ(missing.size(), 1u);
  EXPECT_EQ(describe_breach(named, missing[0], 10.0),
            "itl_p50: missing in measured, so measured cannot be checked against --max-error 10%");

  const RunComparison errors = compare_runs(runs, {"error_rate"});
  const std::vector<ErrorLimitBreach> from_zero = check_max_error(errors, 1000.0, false);
  ASSERT_EQ(from_zero.size(), 1u);  // 0% -> 100%: no finite limit lets it pass
  EXPECT_EQ(from_zero[0].run, 2u);
}

TEST(RunComparisonTest, TableShowsMissingAsADashAndIsTheSameEveryTime) {
  std::vector<RunFolder> runs = three_runs();
  runs[2].setup = nlohmann::json::object();
  const RunComparison c = compare_runs(runs, {"completed", "ttft_p50", "itl_p50", "error_rate"});
  const std::string text = printed(c);
  EXPECT_EQ(text, printed(compare_runs(runs, {"completed", "ttft_p50", "itl_p50", "error_rate"})));
  EXPECT_NE(text.find("runs (differences are against the first):"), std::string::npos) << text;
  EXPECT_NE(text.find("scenario=s model=m"), std::string::npos) << text;
  EXPECT_NE(text.find("  broken    measured   0 requests in requests.csv, 0 ok\n"),
            std::string::npos)
      << text;  // a producer that wrote no setup keys
  EXPECT_NE(text.find("  metric             unit       sim        measured          broken\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("  completed                     100     100   +0.0%       0 -100.0%\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("  TTFT p50           ms       40.00   44.00  +10.0%       \u2013\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("  error rate         %         0.00    0.00   +0.0%   100.0   +inf%\n"),
            std::string::npos)
      << text;
}

TEST(RunComparisonTest, JsonHasNullWhereAValueOrDifferenceIsUndefined) {
  const std::vector<RunFolder> runs = three_runs();
  const nlohmann::json j = comparison_json(compare_runs(runs, {"ttft_p50", "error_rate"}));
  EXPECT_EQ(j["reference"], "sim");
  ASSERT_EQ(j["runs"].size(), 3u);
  EXPECT_EQ(j["runs"][1]["path"], "measured");
  EXPECT_EQ(j["runs"][1]["clock"], "measured");
  EXPECT_EQ(j["runs"][0]["setup"]["scenario"], "s");
  ASSERT_EQ(j["metrics"].size(), 2u);
  const nlohmann::json& ttft = j["metrics"][0];
  EXPECT_EQ(ttft["key"], "ttft_p50");
  EXPECT_EQ(ttft["unit"], "ms");
  EXPECT_EQ(ttft["values"][1], 44.0);
  EXPECT_TRUE(ttft["values"][2].is_null());
  EXPECT_TRUE(ttft["difference_pct"][2].is_null());
  EXPECT_TRUE(j["metrics"][1]["difference_pct"][2].is_null());  // +inf
}

}  // namespace
}  // namespace servesim
