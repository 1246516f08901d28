// SyntheticSource: the RequestSource of generated workloads — open loop (an ArrivalProcess
// starts each request or session), closed loop (N clients that send, wait, think, send) and
// stepped concurrency (a closed loop whose active client count follows a schedule), each
// with optional shared prefixes and multi-turn sessions. Built by make_request_source().
//
// How requests are made: pending arrivals sit in a min-heap ordered by (arrival_s, insertion
// order); an open loop keeps only its next arrival, drawn lazily. Lengths, prefix group and
// turn count are drawn when a request is popped, i.e. in arrival order, each from its own
// Rng stream. A follow-up turn's prompt is the previous prompt + previous output + new user
// tokens; the session keeps its prefix group.
// distinct_prompts N: prompt e (0 <= e < N) has one length, drawn at construction in order
// e = 0, 1, ...; each request draws e uniformly and sends prompt e whole (its prefix group,
// shared over every token), so a repeat shares all its tokens with the earlier sends.
// Stepped: client c is active in step k when c < steps[k]. A client whose next send falls in
// a step where it is inactive sleeps until the next step that activates it; nothing is sent
// at or after the end of the last step. Requests in flight when a step ends finish normally
// and keep the step_index they arrived in.
// Memory: O(clients + sessions in flight + distinct_prompts). Thread-safety: none.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "sim/core/rng.h"
#include "sim/workload/request_source.h"
#include "sim/workload/workload.h"

namespace servesim {

class SyntheticSource final : public RequestSource {
 public:
  // REQUIRES: spec.kind is kOpenLoop, kClosedLoop or kStepped (validated by from_json).
  explicit SyntheticSource(const WorkloadSpec& spec);

  std::optional<double> next_arrival_s() override;
  RequestSpec pop() override;
  void on_request_done(const RequestSpec& request, double now_s) override;
  bool finished() override;
  uint64_t expected_total() const override { return spec_.num_requests; }

 private:
  struct Pending {
    double arrival_s;  // seconds
    uint64_t seq;      // insertion order, breaks ties
    uint32_t client;
    bool next_turn;  // false: the first turn of a new session
    uint64_t session;
    int turn;
    int session_turns;
    int history_tokens;  // tokens
    uint64_t prefix_group;
    int shared_prefix_tokens;  // tokens
  };
  struct Later {
    bool operator()(const Pending& a, const Pending& b) const {
      return a.arrival_s > b.arrival_s || (a.arrival_s == b.arrival_s && a.seq > b.seq);
    }
  };

  bool capped() const { return spec_.num_requests > 0 && issued_ >= spec_.num_requests; }
  void push(Pending p);
  void push_new_session(uint32_t client, double time_s);

  WorkloadSpec spec_;
  Rng arrival_rng_;
  Rng prompt_rng_;
  Rng output_rng_;
  Rng prefix_rng_;
  Rng think_rng_;
  Rng turns_rng_;
  Rng user_rng_;
  ArrivalProcess arrival_;
  std::optional<double> next_open_s_;  // open loop: the next session start, drawn lazily
  bool open_exhausted_ = false;
  std::vector<Pending> heap_;
  uint64_t next_seq_ = 0;
  uint64_t next_session_ = 0;
  uint64_t issued_ = 0;
  uint64_t outstanding_ = 0;
  std::vector<int> dataset_prompt_tokens_;  // distinct_prompts: each prompt's tokens
};

}  // namespace servesim
