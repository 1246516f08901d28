#include "sim/workload/synthetic_source.h"

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace servesim {

namespace {

// One Rng stream per purpose; the numbers are part of the reproducibility contract.
enum Stream : uint64_t {
  kArrivalStream = 1,
  kPromptStream = 2,
  kOutputStream = 3,
  kPrefixStream = 4,
  kThinkStream = 5,
  kTurnsStream = 6,
  kUserStream = 7,
};

// A session's history stops growing at 1e9 tokens: its next prompt is then beyond every
// model's context and refused by max_model_len all the same, and a history plus new tokens
// plus an output (each at most kMaxLengthTokens) stays inside an int.
constexpr int64_t kMaxHistoryTokens = 1'000'000'000;

int history_after(const RequestSpec& request) {
  const int64_t history = int64_t{request.prompt_tokens} + request.output_tokens;
  return static_cast<int>(std::min(history, kMaxHistoryTokens));
}

}  // namespace

SyntheticSource::SyntheticSource(const WorkloadSpec& spec)
    : spec_(spec),
      arrival_rng_(Rng(spec.seed).fork(kArrivalStream)),
      prompt_rng_(Rng(spec.seed).fork(kPromptStream)),
      output_rng_(Rng(spec.seed).fork(kOutputStream)),
      prefix_rng_(Rng(spec.seed).fork(kPrefixStream)),
      think_rng_(Rng(spec.seed).fork(kThinkStream)),
      turns_rng_(Rng(spec.seed).fork(kTurnsStream)),
      user_rng_(Rng(spec.seed).fork(kUserStream)),
      arrival_(spec.arrival) {
  dataset_prompt_tokens_.reserve(static_cast<size_t>(spec.distinct_prompts));
  for (int e = 0; e < spec.distinct_prompts; ++e) {
    dataset_prompt_tokens_.push_back(spec.prompt_tokens.sample(prompt_rng_));
  }
  if (spec.kind == WorkloadKind::kClosedLoop) {
    for (int c = 0; c < spec.clients; ++c) {
      push_new_session(static_cast<uint32_t>(c), spec.ramp_up_s * c / spec.clients);
    }
  } else if (spec.kind == WorkloadKind::kStepped) {
    const int clients = *std::max_element(spec.steps.begin(), spec.steps.end());
    for (int c = 0; c < clients; ++c) push_new_session(static_cast<uint32_t>(c), 0.0);
  }
}

void SyntheticSource::push(Pending p) {
  if (!(p.arrival_s < spec_.duration_s)) return;
  p.seq = next_seq_++;
  heap_.push_back(p);
  std::push_heap(heap_.begin(), heap_.end(), Later{});
}

void SyntheticSource::push_new_session(uint32_t client, double time_s) {
  const std::optional<double> t = spec_.client_send_time(client, time_s);
  if (!t) return;
  push(Pending{*t, 0, client, false, 0, 0, 1, 0, 0, 0});
}

std::optional<double> SyntheticSource::next_arrival_s() {
  if (capped()) return std::nullopt;
  if (spec_.kind == WorkloadKind::kOpenLoop && !next_open_s_ && !open_exhausted_) {
    const double t = arrival_.next_arrival_s(arrival_rng_);
    if (t < spec_.duration_s) {
      next_open_s_ = t;
    } else {
      open_exhausted_ = true;
    }
  }
  std::optional<double> earliest = next_open_s_;
  if (!heap_.empty() && (!earliest || heap_.front().arrival_s <= *earliest)) {
    earliest = heap_.front().arrival_s;
  }
  return earliest;
}

RequestSpec SyntheticSource::pop() {
  next_arrival_s();
  Pending p{};
  // Follow-ups win ties with a new open-loop arrival; either order would be deterministic.
  if (!heap_.empty() && (!next_open_s_ || heap_.front().arrival_s <= *next_open_s_)) {
    std::pop_heap(heap_.begin(), heap_.end(), Later{});
    p = heap_.back();
    heap_.pop_back();
  } else {
    p = Pending{*next_open_s_, 0, 0, false, 0, 0, 1, 0, 0, 0};
    next_open_s_.reset();
  }
  RequestSpec r;
  r.id = issued_++;
  ++outstanding_;
  r.arrival_s = p.arrival_s;
  r.client = p.client;
  r.step_index = spec_.step_at(p.arrival_s);
  if (p.next_turn) {
    r.session = p.session;
    r.turn = p.turn;
    r.session_turns = p.session_turns;
    r.history_tokens = p.history_tokens;
    r.prefix_group = p.prefix_group;
    r.shared_prefix_tokens = p.shared_prefix_tokens;
    r.prompt_tokens = p.history_tokens + spec_.multi_turn->user_tokens.sample(user_rng_);
  } else {
    r.session = next_session_++;
    r.turn = 0;
    r.session_turns = spec_.multi_turn ? spec_.multi_turn->turns.sample(turns_rng_) : 1;
    if (!dataset_prompt_tokens_.empty()) {
      const int64_t e = prefix_rng_.uniform_int(0, spec_.distinct_prompts - 1);
      r.prefix_group = static_cast<uint64_t>(e);
      r.shared_prefix_tokens = dataset_prompt_tokens_[static_cast<size_t>(e)];
      r.prompt_tokens = r.shared_prefix_tokens;
    } else {
      if (spec_.shared_prefix) {
        r.prefix_group =
            static_cast<uint64_t>(prefix_rng_.uniform_int(0, spec_.shared_prefix->groups - 1));
        r.shared_prefix_tokens = spec_.shared_prefix->tokens;
      }
      r.prompt_tokens = r.shared_prefix_tokens + spec_.prompt_tokens.sample(prompt_rng_);
    }
  }
  r.output_tokens = spec_.output_tokens.sample(output_rng_);
  return r;
}

void SyntheticSource::on_request_done(const RequestSpec& request, double now_s) {
  if (outstanding_ > 0) --outstanding_;
  if (request.turn + 1 < request.session_turns) {
    const double think_s = std::max(0.0, spec_.multi_turn->think_time_s.sample(think_rng_));
    Pending next{now_s + think_s,       0,
                 request.client,        true,
                 request.session,       request.turn + 1,
                 request.session_turns, history_after(request),
                 request.prefix_group,  request.shared_prefix_tokens};
    push(next);
    return;
  }
  if (spec_.kind == WorkloadKind::kClosedLoop || spec_.kind == WorkloadKind::kStepped) {
    const double think_s = std::max(0.0, spec_.think_time_s.sample(think_rng_));
    push_new_session(request.client, now_s + think_s);
  }
}

bool SyntheticSource::finished() {
  if (capped()) return true;
  return !next_arrival_s() && outstanding_ == 0;
}

}  // namespace servesim
