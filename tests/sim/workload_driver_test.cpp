// Drives a RequestSource through the EventLoop exactly as the header of request_source.h
// prescribes, with a toy server (fixed per-token costs, unlimited parallelism), and checks
// the whole chain end to end: determinism by fingerprint, stale arrival events, metrics.
#include <gtest/gtest.h>

#include <unordered_map>

#include "sim/core/event_loop.h"
#include "sim/metrics/metrics.h"
#include "sim/workload/workload.h"

namespace servesim {
namespace {

using nlohmann::json;

class ToySystem : public EventHandler {
 public:
  ToySystem(const WorkloadSpec& spec, EventLoop& loop)
      : source_(make_request_source(spec)), loop_(loop) {
    schedule_arrival();
  }

  void handle(const Event& e) override {
    if (e.kind == EventKind::kArrival) {
      scheduled_arrival_s_.reset();
      while (auto t = source_->next_arrival_s()) {
        if (*t > loop_.now_s()) break;
        admit(source_->pop());
      }
      schedule_arrival();
    } else if (e.kind == EventKind::kUser) {
      auto node = in_flight_.extract(e.payload);
      const RequestSpec& r = node.mapped();
      RequestRecord rec;
      rec.id = r.id;
      rec.replica = 0;
      rec.arrival_s = r.arrival_s;
      rec.first_scheduled_s = r.arrival_s;
      rec.first_token_s = r.arrival_s + 1e-4 * r.prompt_tokens;
      rec.finish_s = loop_.now_s();
      rec.prompt_tokens = r.prompt_tokens;
      rec.output_tokens = r.output_tokens;
      rec.step_index = r.step_index;
      metrics.add(rec);
      for (int i = 1; i < r.output_tokens; ++i) metrics.add_itl(0.02, r.id, r.arrival_s);
      ++done_;
      source_->on_request_done(r, loop_.now_s());
      // A follow-up may now be due before the arrival already scheduled (or none was).
      schedule_arrival();
    }
  }

  Progress progress() const override { return {done_, source_->expected_total()}; }

  MetricsCollector metrics;

 private:
  void admit(RequestSpec r) {
    const double service_s = 1e-4 * r.prompt_tokens + 0.02 * r.output_tokens;
    loop_.schedule_in(service_s, EventKind::kUser, 0, r.id);
    in_flight_.emplace(r.id, std::move(r));
  }

  void schedule_arrival() {
    const std::optional<double> t = source_->next_arrival_s();
    if (!t || (scheduled_arrival_s_ && *scheduled_arrival_s_ <= *t)) return;
    loop_.schedule(std::max(*t, loop_.now_s()), EventKind::kArrival);
    scheduled_arrival_s_ = t;
  }

  std::unique_ptr<RequestSource> source_;
  EventLoop& loop_;
  std::unordered_map<uint64_t, RequestSpec> in_flight_;
  std::optional<double> scheduled_arrival_s_;
  uint64_t done_ = 0;
};

struct Outcome {
  std::string fingerprint;
  MetricsSummary summary;
};

Outcome run(const json& j) {
  const WorkloadSpec spec = WorkloadSpec::from_json(j, "", "w");
  EventLoop loop;
  ToySystem system(spec, loop);
  NullObserver observer;
  EXPECT_EQ(loop.run(system, observer), StopReason::kDrained);
  return {loop.fingerprint().hex(), system.metrics.summary()};
}

json multi_turn_open_loop(uint64_t seed) {
  return {{"arrival", {{"type", "gamma"}, {"rate_qps", 5}, {"cv", 2}}},
          {"prompt_tokens", {{"type", "lognormal"}, {"mean", 600}, {"std", 300}}},
          {"output_tokens", {{"type", "uniform"}, {"min", 10}, {"max", 200}}},
          {"shared_prefix", {{"groups", 3}, {"tokens", 256}}},
          {"multi_turn",
           {{"turns", {{"type", "uniform"}, {"min", 1}, {"max", 4}}},
            {"user_tokens", 40},
            {"think_time_s", {{"type", "exponential"}, {"mean", 3}}}}},
          {"num_requests", 2000},
          {"seed", seed}};
}

TEST(WorkloadDriverTest, SameSeedSameFingerprintOtherSeedOtherFingerprint) {
  const Outcome a = run(multi_turn_open_loop(1));
  const Outcome b = run(multi_turn_open_loop(1));
  const Outcome c = run(multi_turn_open_loop(2));
  EXPECT_EQ(a.fingerprint, b.fingerprint);
  EXPECT_NE(a.fingerprint, c.fingerprint);
  EXPECT_EQ(a.summary.completed, 2000u);
  EXPECT_EQ(a.summary.e2e.p99_s, b.summary.e2e.p99_s);
}

TEST(WorkloadDriverTest, ClosedLoopThroughTheEventLoopCompletesEveryCycle) {
  const json j = {{"arrival", {{"type", "closed"}, {"clients", 4}, {"think_time_s", 1.0}}},
                  {"prompt_tokens", 1000},
                  {"output_tokens", 50},
                  {"duration_s", 110}};
  const Outcome o = run(j);
  // Cycle = 0.1 s prefill + 1.0 s decode + 1.0 s think = 2.1 s: 53 requests per client.
  EXPECT_EQ(o.summary.completed, 4u * 53u);
  EXPECT_NEAR(o.summary.e2e.p50_s, 1.1, 1e-6);  // samples are stored as floats
  EXPECT_EQ(o.summary.itl.count, 4u * 53u * 49u);
}

}  // namespace
}  // namespace servesim
