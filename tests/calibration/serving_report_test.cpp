#include "calibration/serving/serving_report.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>

namespace servesim {
namespace {

const ServingMetricSpec& ttft_mean_spec() {
  const ServingMetricSpec& spec = serving_metric_specs()[0];
  EXPECT_EQ(spec.key, "ttft_mean");
  return spec;
}

// A run whose TTFT measured 100 ms and simulated `before_ms` / `after_ms`.
ServingRunReport run(std::string name, bool held_out, double before_ms, double after_ms) {
  ServingRunReport r;
  r.name = std::move(name);
  r.held_out = held_out;
  r.measured.ttft.mean_s = 0.100;
  r.before.ttft.mean_s = before_ms * 1e-3;
  r.after.ttft.mean_s = after_ms * 1e-3;
  return r;
}

// Held out: |errors| before 10%, 20%, 90% (one far-off run), after 5%, 10%, 60%, 30%.
ServingReport report_with_an_outlier() {
  ServingReport report;
  report.runs = {run("a", true, 110, 105), run("b", true, 80, 90), run("c", true, 190, 160),
                 run("d", false, 300, 300)};
  report.runs.push_back(run("e", true, std::nan(""), 130));  // no "before": left out of it
  return report;
}

TEST(ServingReport, TheMedianIsTheMiddleErrorSoOneFarOffRunMovesOnlyTheMean) {
  const ServingReport report = report_with_an_outlier();
  const ServingMetricSpec& ttft = ttft_mean_spec();
  EXPECT_NEAR(mean_abs_error(report, ttft, true, false), 0.4, 1e-12);    // (10 + 20 + 90) / 3
  EXPECT_NEAR(median_abs_error(report, ttft, true, false), 0.2, 1e-12);  // odd count: middle
  EXPECT_NEAR(mean_abs_error(report, ttft, true, true), 0.2625, 1e-12);  // (5+10+60+30) / 4
  EXPECT_NEAR(median_abs_error(report, ttft, true, true), 0.2, 1e-12);   // even: (10 + 30) / 2
  EXPECT_NEAR(median_abs_error(report, ttft, false, true), 2.0, 1e-12);  // the fitted run alone
  EXPECT_TRUE(std::isnan(median_abs_error(report, serving_metric_specs()[3], true, true)));
}

TEST(ServingReport, TheJsonAndTheTextGiveMeanAndMedian) {
  const ServingReport report = report_with_an_outlier();
  const nlohmann::json j = serving_report_json(report);
  EXPECT_NEAR(j["median_abs_error"]["ttft_mean"]["held_out_before"].get<double>(), 0.2, 1e-12);
  EXPECT_NEAR(j["mean_abs_error"]["ttft_mean"]["held_out_before"].get<double>(), 0.4, 1e-12);
  EXPECT_TRUE(j["median_abs_error"]["tpot_mean"]["held_out_after"].is_null());

  const std::string text = serving_report_text(report);
  EXPECT_NE(text.find("|error| on the held-out runs"), std::string::npos) << text;
  EXPECT_NE(text.find("mean before"), std::string::npos) << text;
  EXPECT_NE(text.find("median before"), std::string::npos) << text;
  // ttft_mean: mean 40.0% before, median 20.0% before and after.
  const size_t row = text.find("  ttft_mean ");
  ASSERT_NE(row, std::string::npos) << text;
  const std::string line = text.substr(row, text.find('\n', row) - row);
  EXPECT_NE(line.find("40.0%"), std::string::npos) << line;
  EXPECT_NE(line.find("20.0%"), std::string::npos) << line;
}

// Runs the caller left out (a published row whose load its source does not record) are named
// in their own section and in the JSON, apart from the warnings.
TEST(ServingReport, RunsLeftOutAreNamedInTheTextAndTheJson) {
  ServingReport report = report_with_an_outlier();
  EXPECT_EQ(serving_report_text(report).find("left out"), std::string::npos);
  EXPECT_TRUE(serving_report_json(report)["left_out"].empty());
  report.left_out = {"rows.csv:4 (id): its source records no concurrency"};
  const std::string text = serving_report_text(report);
  EXPECT_NE(text.find("\nleft out of the fit and of the held-out runs\n  - rows.csv:4 (id): its "
                      "source records no concurrency\n"),
            std::string::npos)
      << text;
  EXPECT_EQ(serving_report_json(report)["left_out"][0],
            "rows.csv:4 (id): its source records no concurrency");
}

}  // namespace
}  // namespace servesim
