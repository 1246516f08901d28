// ClientConnectionPool's books: connections handed out up to the limit, waiters served first come
// first served, withdrawn waiters skipped, and the time-integral statistics against a
// hand-worked timeline.
#include "sim/service/client_connection_pool.h"

#include <gtest/gtest.h>

#include <stdexcept>

namespace servesim {
namespace {

TEST(ClientConnectionPool, HandsOutUpToItsConnectionsThenQueuesInArrivalOrder) {
  ClientConnectionPool pool("pool p", 2);
  EXPECT_TRUE(pool.acquire(1, 0.0));
  EXPECT_TRUE(pool.acquire(2, 0.0));
  EXPECT_FALSE(pool.acquire(3, 1.0));
  EXPECT_FALSE(pool.acquire(4, 2.0));
  EXPECT_EQ(pool.held(), 2);
  EXPECT_EQ(pool.waiting(), 2u);
  EXPECT_EQ(pool.release(3.0), std::optional<uint64_t>(3));
  EXPECT_EQ(pool.release(4.0), std::optional<uint64_t>(4));
  EXPECT_EQ(pool.held(), 2);
  EXPECT_EQ(pool.release(5.0), std::nullopt);
  EXPECT_EQ(pool.held(), 1);
}

TEST(ClientConnectionPool, AWithdrawnWaiterIsSkipped) {
  ClientConnectionPool pool("pool p", 1);
  ASSERT_TRUE(pool.acquire(1, 0.0));
  ASSERT_FALSE(pool.acquire(2, 0.0));
  ASSERT_FALSE(pool.acquire(3, 0.0));
  ASSERT_FALSE(pool.acquire(4, 0.0));
  pool.withdraw(3, 1.0);  // in the middle
  pool.withdraw(2, 1.0);  // at the front
  EXPECT_EQ(pool.waiting(), 1u);
  EXPECT_EQ(pool.release(2.0), std::optional<uint64_t>(4));
  EXPECT_EQ(pool.waiting(), 0u);
}

TEST(ClientConnectionPool, StatisticsAreTimeIntegrals) {
  // 2 connections over 10 s: key 1 holds [0, 4), key 2 [0, 10), key 3 waits [1, 4) then holds
  // [4, 6). Held: 4 + 10 + 2 = 16 connection-seconds of 20; waiting 3 waiter-seconds.
  ClientConnectionPool pool("pool p", 2);
  ASSERT_TRUE(pool.acquire(1, 0.0));
  ASSERT_TRUE(pool.acquire(2, 0.0));
  ASSERT_FALSE(pool.acquire(3, 1.0));
  ASSERT_EQ(pool.release(4.0), std::optional<uint64_t>(3));
  ASSERT_EQ(pool.release(6.0), std::nullopt);
  ASSERT_EQ(pool.release(10.0), std::nullopt);
  const StationStats s = pool.stats(10.0);
  EXPECT_EQ(s.name, "pool p");
  EXPECT_EQ(s.workers, 2);
  EXPECT_EQ(s.jobs, 3u);
  EXPECT_DOUBLE_EQ(s.utilisation, 16.0 / 20.0);
  EXPECT_DOUBLE_EQ(s.mean_queue, 3.0 / 10.0);
  EXPECT_EQ(s.max_queue, 1u);
  EXPECT_DOUBLE_EQ(s.mean_wait_s, 3.0 / 3.0);
  EXPECT_DOUBLE_EQ(s.mean_service_s, 16.0 / 3.0);
}

TEST(ClientConnectionPool, ReleasingWithNothingHeldIsALogicError) {
  ClientConnectionPool pool("pool p", 1);
  EXPECT_THROW(pool.release(0.0), std::logic_error);
  EXPECT_THROW(ClientConnectionPool("pool q", 0), std::invalid_argument);
}

}  // namespace
}  // namespace servesim
