#include "models/row_scale.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

#include "models/config_error.h"

namespace servesim {
namespace {

using ::testing::HasSubstr;
using ::testing::ThrowsMessage;

TEST(RowScale, EmptyIsTheIdentity) {
  const RowScale s;
  EXPECT_TRUE(s.empty());
  EXPECT_EQ(s.at(1), 1.0);
  EXPECT_EQ(s.at(4096), 1.0);
}

TEST(RowScale, ExactAtItsPointsAndLinearInLogRowsBetween) {
  const RowScale s({{16, 1.0}, {64, 2.0}, {256, 1.5}}, "test");
  EXPECT_DOUBLE_EQ(s.at(16), 1.0);
  EXPECT_DOUBLE_EQ(s.at(64), 2.0);
  EXPECT_DOUBLE_EQ(s.at(256), 1.5);
  // 32 is halfway from 16 to 64 in log(rows), 128 halfway from 64 to 256.
  EXPECT_DOUBLE_EQ(s.at(32), 1.5);
  EXPECT_DOUBLE_EQ(s.at(128), 1.75);
  // Not halfway in rows: 40 lies at log(40/16)/log(4) of the way.
  EXPECT_NEAR(s.at(40), 1.0 + std::log(2.5) / std::log(4.0), 1e-12);
}

TEST(RowScale, FlatBeyondItsEnds) {
  const RowScale s({{16, 1.2}, {64, 0.9}}, "test");
  EXPECT_DOUBLE_EQ(s.at(1), 1.2);
  EXPECT_DOUBLE_EQ(s.at(0), 1.2);
  EXPECT_DOUBLE_EQ(s.at(10000), 0.9);
}

TEST(RowScale, BadPointsAreOneLineErrorsNamingTheContext) {
  EXPECT_THAT(
      [] {
        RowScale({{16, 1.0}, {16, 2.0}}, "p.json: row_scale.mlp");
      },
      ThrowsMessage<ConfigError>(HasSubstr("p.json: row_scale.mlp: rows must strictly")));
  EXPECT_THAT(
      [] {
        RowScale({{32, 1.0}, {16, 2.0}}, "ctx");
      },
      ThrowsMessage<ConfigError>(HasSubstr("strictly increase")));
  EXPECT_THAT(
      [] {
        RowScale({{16, 0.0}}, "ctx");
      },
      ThrowsMessage<ConfigError>(HasSubstr("factor > 0")));
  EXPECT_THAT(
      [] {
        RowScale({{-1, 1.0}}, "ctx");
      },
      ThrowsMessage<ConfigError>(HasSubstr("rows > 0")));
  EXPECT_THROW(RowScale({{16, std::nan("")}}, "ctx"), ConfigError);
}

}  // namespace
}  // namespace servesim
