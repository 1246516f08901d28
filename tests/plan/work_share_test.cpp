// share_for across ranks (threads standing in for MPI processes): each rank runs only the
// items it owns, every rank ends up with every result, and a ConfigError reaches all ranks.
#include "plan/work_share.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>

#include "models/config_error.h"
#include "thread_ranks.h"

namespace servesim {
namespace {

using testing::run_ranks;

struct Outcome {
  std::vector<double> values;  // item k's result
  std::vector<int> ran_by;     // the rank that ran item k, as every rank learns it
  std::string error;
};

Outcome square_items(WorkShare& share, size_t count, size_t failing = SIZE_MAX) {
  Outcome o;
  o.values.assign(count, 0);
  o.ran_by.assign(count, -1);
  try {
    share_for(
        share, count, 2,
        [&](size_t k) {
          if (k >= failing) throw ConfigError("item " + std::to_string(k) + " failed");
          o.values[k] = static_cast<double>(k * k) + 0.5;
          o.ran_by[k] = share.rank();
        },
        [&](size_t k, ByteWriter& out) {
          out.write(o.values[k]);
          out.write(o.ran_by[k]);
        },
        [&](size_t k, ByteReader& in) {
          o.values[k] = in.get<double>();
          o.ran_by[k] = in.get<int>();
        });
  } catch (const ConfigError& e) {
    o.error = e.what();
  }
  return o;
}

TEST(WorkShare, EveryRankGetsEveryResultAndRunsOnlyItsOwnItems) {
  for (int size : {1, 2, 3}) {
    const std::vector<Outcome> outcomes =
        run_ranks<Outcome>(size, [](WorkShare& share) { return square_items(share, 10); });
    for (const Outcome& o : outcomes) {
      ASSERT_EQ(o.values.size(), 10u);
      for (size_t k = 0; k < 10; ++k) {
        EXPECT_EQ(o.values[k], static_cast<double>(k * k) + 0.5) << size << " ranks, item " << k;
        EXPECT_EQ(o.ran_by[k], static_cast<int>(k % static_cast<size_t>(size))) << k;
      }
      EXPECT_EQ(o.error, "");
    }
  }
}

TEST(WorkShare, MoreRanksThanItemsIsFine) {
  const std::vector<Outcome> outcomes =
      run_ranks<Outcome>(4, [](WorkShare& share) { return square_items(share, 2); });
  for (const Outcome& o : outcomes) EXPECT_EQ(o.values, (std::vector<double>{0.5, 1.5}));
}

TEST(WorkShare, AConfigErrorReachesEveryRankAsTheLowestItemsError) {
  // Items 5..9 fail, on both ranks; every rank reports item 5's error, as parallel_for does.
  const std::vector<Outcome> outcomes =
      run_ranks<Outcome>(2, [](WorkShare& share) { return square_items(share, 10, 5); });
  for (const Outcome& o : outcomes) EXPECT_EQ(o.error, "item 5 failed");
  SoloWorkShare alone;
  EXPECT_EQ(square_items(alone, 10, 5).error, "item 5 failed");
}

TEST(ByteStream, ReadsBackWhatWasWritten) {
  ByteWriter w;
  w.write<int64_t>(-7);
  const std::string with_nul("a\0b", 3);
  w.write(with_nul);
  w.write(std::vector<std::string>{"x", ""});
  w.write(std::numeric_limits<double>::quiet_NaN());
  ByteReader r(w.bytes());
  EXPECT_EQ(r.get<int64_t>(), -7);
  EXPECT_EQ(r.get<std::string>(), with_nul);
  EXPECT_EQ(r.get<std::vector<std::string>>(), (std::vector<std::string>{"x", ""}));
  EXPECT_TRUE(std::isnan(r.get<double>()));
  EXPECT_TRUE(r.at_end());
  EXPECT_THROW(r.get<char>(), std::runtime_error);
}

}  // namespace
}  // namespace servesim
