// ReplaySource: a closed loop of 2 against a fake server whose every output token takes one
// second (sends computable by hand), recorded arrivals replayed exactly (and held back by a
// cap), vllm bench's open-loop gaps (rescaled to end at N / rate, deterministic per seed),
// everything at once, make_request_source's hook, and the spec's bad input.
#include "sim/workload/replay_source.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <vector>

#include "models/config_error.h"
#include "sim/workload/workload.h"

namespace servesim {
namespace {

ReplaySpec spec_of(const std::vector<int>& outputs) {
  ReplaySpec spec;
  for (int out : outputs) spec.requests.push_back({ReplayRequest::kNone, 100, out});
  return spec;
}

struct Sent {
  double at_s;
  int output_tokens;
};

// Drives the source as the simulator does, against a server that takes step_s per output token
// and serves every request at once; returns each request's send.
std::vector<Sent> drive(ReplaySource& source, double step_s) {
  std::vector<Sent> sent;
  std::multimap<double, RequestSpec> finishing;  // by finish time, ties in send order
  double now = 0;
  while (!source.finished() || !finishing.empty()) {
    const std::optional<double> next = source.next_arrival_s();
    if (next && (finishing.empty() || *next <= finishing.begin()->first)) {
      now = *next;
      RequestSpec r = source.pop();
      EXPECT_EQ(r.id, sent.size());
      sent.push_back({r.arrival_s, r.output_tokens});
      finishing.emplace(now + step_s * r.output_tokens, std::move(r));
      continue;
    }
    now = finishing.begin()->first;
    source.on_request_done(finishing.begin()->second, now);
    finishing.erase(finishing.begin());
  }
  return sent;
}

std::vector<double> times(const std::vector<Sent>& sent) {
  std::vector<double> t;
  for (const Sent& s : sent) t.push_back(s.at_s);
  return t;
}

TEST(ReplaySource, ClosedLoopOfTwoSendsWhenASlotFrees) {
  ReplaySpec spec = spec_of({3, 1, 2, 2, 1});
  spec.max_concurrency = 2;
  ReplaySource source(spec, 7);
  EXPECT_EQ(source.expected_total(), 5u);
  const std::vector<Sent> sent = drive(source, 1.0);
  // r0 and r1 at 0; r1 ends at 1 -> r2; r0 and r2 end at 3 -> r3 and r4.
  EXPECT_EQ(times(sent), (std::vector<double>{0, 0, 1, 3, 3}));
  for (size_t i = 0; i < sent.size(); ++i) {
    EXPECT_EQ(sent[i].output_tokens, spec.requests[i].output_tokens) << i;
  }
}

TEST(ReplaySource, RecordedArrivalsExactlyAndHeldBackByACap) {
  ReplaySpec spec = spec_of({1, 1, 1, 1});
  spec.recorded_arrivals = true;
  const std::vector<double> at = {0.0, 0.125, 0.7, 2.5};
  for (size_t i = 0; i < at.size(); ++i) spec.requests[i].arrival_s = at[i];
  ReplaySource open(spec, 1);
  EXPECT_EQ(times(drive(open, 1.0)), at);
  spec.max_concurrency = 1;  // each takes 1 s: r1 waits for r0, r2 for r1, r3 for r2
  ReplaySource capped(spec, 1);
  EXPECT_EQ(times(drive(capped, 1.0)), (std::vector<double>{0.0, 1.0, 2.0, 3.0}));
}

TEST(ReplaySource, OpenLoopGapsAsVllmBenchDrawsThem) {
  ReplaySpec spec = spec_of(std::vector<int>(8, 1));
  spec.request_rate_per_s = 4;
  ReplaySource a(spec, 11);
  ReplaySource b(spec, 11);
  ReplaySource c(spec, 12);
  const std::vector<double> ta = times(drive(a, 0.01));
  EXPECT_EQ(ta, times(drive(b, 0.01)));  // same seed, same sends
  EXPECT_NE(ta, times(drive(c, 0.01)));
  EXPECT_GT(ta.front(), 0.0);  // the first request waits a gap too
  EXPECT_TRUE(std::is_sorted(ta.begin(), ta.end()));
  EXPECT_NEAR(ta.back(), 8 / 4.0, 1e-12);  // rescaled to end at N / rate
  spec.burstiness = ReplaySpec::kUnlimited;
  ReplaySource constant(spec, 11);
  const std::vector<double> tc = times(drive(constant, 0.01));
  for (size_t i = 0; i < tc.size(); ++i) EXPECT_NEAR(tc[i], (i + 1) / 4.0, 1e-12);
}

TEST(ReplaySource, EverythingAtOnceWithoutRateOrCap) {
  ReplaySource source(spec_of({5, 1, 3}), 0);
  EXPECT_EQ(times(drive(source, 1.0)), (std::vector<double>{0, 0, 0}));
}

TEST(ReplaySource, MadeByMakeRequestSource) {
  WorkloadSpec w;
  w.seed = 3;
  ReplaySpec spec = spec_of({2, 2});
  spec.max_concurrency = 1;
  w.replay = std::make_shared<const ReplaySpec>(spec);
  const std::unique_ptr<RequestSource> source = make_request_source(w);
  EXPECT_EQ(source->expected_total(), 2u);
  const RequestSpec r = source->pop();
  EXPECT_EQ(r.output_tokens, 2);
  EXPECT_FALSE(source->next_arrival_s());  // the cap of 1 is taken
  source->on_request_done(r, 4.0);
  EXPECT_EQ(source->next_arrival_s(), 4.0);
}

std::string error_of(const ReplaySpec& spec) {
  try {
    ReplaySource source(spec, 0);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "no error";
}

TEST(ReplaySource, BadSpecs) {
  EXPECT_NE(error_of(ReplaySpec{}).find("replay.requests: none"), std::string::npos);
  EXPECT_NE(error_of(spec_of({1, 0})).find("requests[1].output_tokens"), std::string::npos);
  ReplaySpec back = spec_of({1, 1});
  back.recorded_arrivals = true;
  back.requests[0].arrival_s = 2;
  back.requests[1].arrival_s = 1;
  EXPECT_NE(error_of(back).find("requests[1].arrival_s: goes back in time"), std::string::npos);
  back.requests[1].arrival_s = ReplayRequest::kNone;
  EXPECT_NE(error_of(back).find("requests[1].arrival_s: must be a finite"), std::string::npos);
  ReplaySpec cap = spec_of({1});
  cap.max_concurrency = 0;
  EXPECT_NE(error_of(cap).find("max_concurrency"), std::string::npos);
  ReplaySpec rate = spec_of({1});
  rate.request_rate_per_s = 0;
  EXPECT_NE(error_of(rate).find("request_rate_per_s"), std::string::npos);
  ReplaySpec burst = spec_of({1});
  burst.burstiness = -1;
  EXPECT_NE(error_of(burst).find("burstiness"), std::string::npos);
}

}  // namespace
}  // namespace servesim
