#include "serve/loadtest/loadtest_report.h"

#include <gtest/gtest.h>

namespace servesim {
namespace {

TEST(LoadtestJson, ErrorsByCauseAndKnee) {
  LoadtestResult r;
  r.errors[static_cast<size_t>(ErrorCause::kReset)] = 2;
  r.http_status[200] = 5;
  r.http_status[0] = 2;
  const nlohmann::json j =
      loadtest_json(r, LoadtestSetup{}, EndpointUrl::parse("http://h:1"), Knee{1, "why"}, {1, 4});
  EXPECT_EQ(j["errors"]["reset"], 2);
  EXPECT_EQ(j["errors"]["refused"], 0);
  EXPECT_EQ(j["http_status"]["200"], 5);
  EXPECT_EQ(j["http_status"]["none"], 2);
  EXPECT_EQ(j["knee"]["step"], 2);
  EXPECT_EQ(j["knee"]["clients"], 4);
  EXPECT_EQ(j["url"], "http://h:1");
}

}  // namespace
}  // namespace servesim
