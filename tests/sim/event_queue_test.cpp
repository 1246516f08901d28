#include "sim/core/event_queue.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <stdexcept>
#include <utility>
#include <vector>

#include "sim/core/event_loop.h"
#include "sim/core/rng.h"

namespace servesim {
namespace {

TEST(EventQueueTest, PopsInTimeThenInsertionOrder) {
  EventQueue q;
  q.push(2.0, EventKind::kStepEnd, 0, 10);
  q.push(1.0, EventKind::kArrival, 0, 11);
  q.push(2.0, EventKind::kArrival, 0, 12);
  q.push(1.0, EventKind::kTimeout, 0, 13);
  q.push(0.5, EventKind::kSample, 0, 14);
  std::vector<uint64_t> order;
  while (!q.empty()) order.push_back(q.pop().payload);
  EXPECT_EQ(order, (std::vector<uint64_t>{14, 11, 13, 10, 12}));
}

TEST(EventQueueTest, MatchesSortedOrderOnRandomInterleavedPushesAndPops) {
  Rng rng(7);
  EventQueue q;
  std::vector<Event> reference;  // what is pending, kept sorted by (time, seq)
  auto earlier = [](const Event& a, const Event& b) {
    return a.time_s < b.time_s || (a.time_s == b.time_s && a.seq < b.seq);
  };
  for (int i = 0; i < 20000; ++i) {
    if (q.empty() || rng.uniform() < 0.6) {
      // Coarse times force many ties, which the seq must break.
      const double t = static_cast<double>(rng.uniform_int(0, 50));
      const uint64_t seq = q.push(t, EventKind::kUser, 0, static_cast<uint64_t>(i));
      reference.push_back(Event{t, seq, EventKind::kUser, 0, static_cast<uint64_t>(i)});
    } else {
      auto it = std::min_element(reference.begin(), reference.end(), earlier);
      ASSERT_EQ(q.top().seq, it->seq);
      const Event e = q.pop();
      EXPECT_EQ(e.payload, it->payload);
      reference.erase(it);
    }
    ASSERT_EQ(q.size(), reference.size());
  }
}

class Recorder : public EventHandler {
 public:
  explicit Recorder(EventLoop& loop) : loop_(loop) {}
  void handle(const Event& e) override {
    seen.push_back(e);
    // A chain of follow-ups at equal and later times exercises scheduling from handlers.
    if (e.kind == EventKind::kArrival && e.payload < 5) {
      loop_.schedule_in(0.0, EventKind::kStepEnd, 0, e.payload);
      loop_.schedule_in(1.0, EventKind::kArrival, 0, e.payload + 1);
    }
  }
  Progress progress() const override { return {seen.size(), 0}; }
  std::vector<Event> seen;

 private:
  EventLoop& loop_;
};

TEST(EventLoopTest, RunsToCompletionAndAdvancesTheClock) {
  EventLoop loop;
  Recorder rec(loop);
  loop.schedule(0.0, EventKind::kArrival, 0, 0);
  NullObserver observer;
  EXPECT_EQ(loop.run(rec, observer), StopReason::kDrained);
  ASSERT_EQ(rec.seen.size(), 11u);
  EXPECT_DOUBLE_EQ(loop.now_s(), 5.0);
  // The zero-delay step end runs before the next arrival one second later.
  EXPECT_EQ(rec.seen[1].kind, EventKind::kStepEnd);
  EXPECT_EQ(loop.events_executed(), 11u);
}

TEST(EventLoopTest, SchedulingIntoThePastIsAnError) {
  EventLoop loop;
  Recorder rec(loop);
  loop.schedule(3.0, EventKind::kUser);
  ASSERT_TRUE(loop.step(rec));
  EXPECT_THROW(loop.schedule(2.0, EventKind::kUser), std::logic_error);
  EXPECT_THROW(loop.schedule_in(-1.0, EventKind::kUser), std::logic_error);
  EXPECT_NO_THROW(loop.schedule(3.0, EventKind::kUser));
}

TEST(EventLoopTest, StopsAtTimeLimitAndResumes) {
  EventLoop loop;
  Recorder rec(loop);
  loop.schedule(0.0, EventKind::kArrival, 0, 0);
  NullObserver observer;
  RunOptions options;
  options.until_s = 2.5;
  EXPECT_EQ(loop.run(rec, observer, options), StopReason::kTimeLimit);
  EXPECT_DOUBLE_EQ(loop.now_s(), 2.5);
  EXPECT_EQ(rec.seen.size(), 6u);  // arrivals 0..2 and their step ends
  EXPECT_EQ(loop.run(rec, observer), StopReason::kDrained);
  EXPECT_EQ(rec.seen.size(), 11u);
}

class StopAfter : public Observer {
 public:
  explicit StopAfter(int polls) : polls_(polls) {}
  bool should_stop() override { return --polls_ < 0; }
  void on_progress(double, uint64_t done, uint64_t) override { last_done = done; }
  uint64_t last_done = 0;

 private:
  int polls_;
};

TEST(EventLoopTest, ObserverCanStopTheRun) {
  EventLoop loop;
  Recorder rec(loop);
  loop.schedule(0.0, EventKind::kArrival, 0, 0);
  StopAfter observer(2);
  RunOptions options;
  options.stop_check_every = 1;
  EXPECT_EQ(loop.run(rec, observer, options), StopReason::kStopped);
  EXPECT_EQ(rec.seen.size(), 2u);
  EXPECT_EQ(observer.last_done, 2u);  // progress is reported at the end too
}

TEST(FingerprintTest, SameTraceSameHashAndAnyChangeShows) {
  auto run = [](double second_time, uint64_t payload) {
    Fingerprint f;
    f.add(Event{0.0, 0, EventKind::kArrival, 0, 1});
    f.add(Event{second_time, 1, EventKind::kStepEnd, 2, payload});
    return f;
  };
  EXPECT_EQ(run(1.0, 5).hex(), run(1.0, 5).hex());
  EXPECT_NE(run(1.0, 5).value(), run(1.0 + 1e-12, 5).value());
  EXPECT_NE(run(1.0, 5).value(), run(1.0, 6).value());
  EXPECT_EQ(run(1.0, 5).hex().size(), 16u);
  // Pinned: the mix is part of the golden-test contract and must not drift.
  EXPECT_EQ(run(1.0, 5).hex(), "f44eb8d973f936e6");
}

TEST(FingerprintTest, EventKindsKeepTheirNumbers) {
  // Every golden fingerprint folds these numbers in: renumbering a kind (say, by removing one
  // before it) would change them all.
  const std::pair<EventKind, int> kinds[] = {
      {EventKind::kArrival, 0},         {EventKind::kDispatch, 1},
      {EventKind::kStepEnd, 2},         {EventKind::kClientWake, 4},
      {EventKind::kTimeout, 5},         {EventKind::kSample, 6},
      {EventKind::kNetworkDelivery, 7}, {EventKind::kUser, 8},
      {EventKind::kStationDone, 9},     {EventKind::kDeadline, 10},
      {EventKind::kKvHandoff, 11},      {EventKind::kKvLoaded, 12},
      {EventKind::kHostKvLoaded, 13},   {EventKind::kHostKvStored, 14},
  };
  for (const auto& [kind, number] : kinds) {
    EXPECT_EQ(static_cast<int>(kind), number) << to_string(kind);
  }
}

}  // namespace
}  // namespace servesim
