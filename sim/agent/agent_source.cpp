#include "sim/agent/agent_source.h"

#include <algorithm>
#include <iterator>
#include <stdexcept>

namespace servesim {
namespace {

// One Rng stream per purpose; the numbers are part of the reproducibility contract. The
// session purposes follow at kSessionStreams + SessionHost::Purpose.
enum Stream : uint64_t {
  kArrivalStream = 101,
  kWorkflowStream = 102,
  kThinkStream = 103,
  kSessionStreams = 110,
};
constexpr size_t kPurposes = 9;  // SessionHost::Purpose values

}  // namespace

AgentSource::AgentSource(const WorkloadSpec& workload, const AgentSpec& agent, Observer& observer)
    : workload_(workload),
      agent_(agent),
      observer_(observer),
      arrival_rng_(Rng(workload.seed).fork(kArrivalStream)),
      workflow_rng_(Rng(workload.seed).fork(kWorkflowStream)),
      think_rng_(Rng(workload.seed).fork(kThinkStream)),
      arrival_(workload.arrival) {
  for (size_t p = 0; p < kPurposes; ++p)
    rngs_.push_back(Rng(workload.seed).fork(kSessionStreams + p));
  for (const WorkflowSpec& w : agent.workflows) total_weight_ += w.weight;
  if (workload.agent_closed_loop && !workload.steps.empty()) {
    // Stepped: every user the largest step has; each starts when its first step comes.
    const int users = *std::max_element(workload.steps.begin(), workload.steps.end());
    for (int u = 0; u < users; ++u) {
      push_timer({0.0, 0, TimerKind::kUserStart, 0, 0, static_cast<uint32_t>(u)});
    }
  } else if (workload.agent_closed_loop) {
    for (int u = 0; u < workload.clients; ++u) {
      const double at = workload.ramp_up_s * u / workload.clients;
      push_timer({at, 0, TimerKind::kUserStart, 0, 0, static_cast<uint32_t>(u)});
    }
  }
}

AgentSource::~AgentSource() = default;

Rng& AgentSource::rng(Purpose purpose) {
  return rngs_[static_cast<size_t>(purpose)];
}

ToolResultCache& AgentSource::tool_cache(const StepSpec& step) {
  return tool_caches_.try_emplace(&step, step.tool.cache).first->second;
}

uint64_t AgentSource::trace_block_id(uint64_t hash_lo, uint64_t hash_hi) {
  const uint64_t next = trace_block_ids_.size();
  return trace_block_ids_.try_emplace({hash_lo, hash_hi}, next).first->second;
}

std::pair<uint64_t, uint64_t> AgentSource::replay_block(uint64_t block_id, uint64_t stream,
                                                        uint64_t offset) {
  return replay_blocks_.try_emplace(block_id, stream, offset).first->second;
}

void AgentSource::push_timer(Timer t) {
  t.seq = next_seq_++;
  timers_.push_back(t);
  std::push_heap(timers_.begin(), timers_.end(), Later{});
}

bool AgentSource::may_start(double at_s) const {
  return at_s < workload_.duration_s && (agent_.sessions == 0 || next_session_ < agent_.sessions);
}

void AgentSource::draw_open_start() {
  if (workload_.agent_closed_loop || next_open_s_ || open_exhausted_) return;
  const bool recorded = !agent_.trace.empty() && agent_.trace_recorded_starts;
  const double at = !recorded                             ? arrival_.next_arrival_s(arrival_rng_)
                    : next_session_ < agent_.trace.size() ? agent_.trace[next_session_].start_s
                                                          : workload_.duration_s;
  if (may_start(at)) {
    next_open_s_ = at;
  } else {
    open_exhausted_ = true;
  }
}

std::optional<double> AgentSource::next_arrival_s() {
  draw_open_start();
  std::optional<double> next = next_open_s_;
  auto earlier = [&next](double t) {
    if (!next || t < *next) next = t;
  };
  if (!ready_.empty()) earlier(ready_.front().spec.arrival_s);
  if (!timers_.empty()) earlier(timers_.front().at_s);
  return next;
}

void AgentSource::advance_to(double now_s) {
  while (true) {
    draw_open_start();
    const bool timer_due = !timers_.empty() && timers_.front().at_s <= now_s;
    const bool open_due = next_open_s_ && *next_open_s_ <= now_s;
    if (!timer_due && !open_due) return;
    if (open_due && (!timer_due || *next_open_s_ <= timers_.front().at_s)) {
      const double at = *next_open_s_;
      next_open_s_.reset();
      start_session(0, at);
      continue;
    }
    std::pop_heap(timers_.begin(), timers_.end(), Later{});
    const Timer t = timers_.back();
    timers_.pop_back();
    if (t.kind == TimerKind::kUserStart) {
      // A stepped user whose step leaves it out waits for the next step that counts it.
      const std::optional<double> at = workload_.client_send_time(t.user, t.at_s);
      if (at && *at > t.at_s) {
        push_timer({*at, 0, TimerKind::kUserStart, 0, 0, t.user});
      } else if (at && may_start(t.at_s)) {
        start_session(t.user, t.at_s);
      }
      continue;
    }
    const auto it = sessions_.find(t.session);
    it->second->on_timer(t.frame, t.at_s);
    settle(t.session);
  }
}

void AgentSource::start_session(uint32_t user, double now_s) {
  if (!agent_.trace.empty()) {
    const uint64_t id = next_session_++;
    auto session = std::make_unique<TraceSession>(id, agent_.trace[id], *this,
                                                  observer_.wants_session_spans());
    SessionRun& s = *session;
    sessions_.emplace(id, std::move(session));
    s.start(now_s);
    settle(id);
    return;
  }
  double u = workflow_rng_.uniform() * total_weight_;
  size_t w = 0;
  while (w + 1 < agent_.workflows.size() && u >= agent_.workflows[w].weight) {
    u -= agent_.workflows[w].weight;
    ++w;
  }
  const uint64_t id = next_session_++;
  auto session =
      std::make_unique<AgentSession>(id, agent_.workflows[w], w + 1, user, *this,
                                     agent_.record_trace, observer_.wants_session_spans());
  if (agent_.workflows[w].tenant >= 0) session_tenants_.emplace(id, agent_.workflows[w].tenant);
  SessionRun& s = *session;
  sessions_.emplace(id, std::move(session));
  s.start(now_s);
  settle(id);
}

void AgentSource::issue_call(SessionRun& session, int frame, RequestSpec spec) {
  spec.step_index = workload_.step_at(spec.arrival_s);
  if (const auto t = session_tenants_.find(session.record().id); t != session_tenants_.end()) {
    spec.tenant = static_cast<uint32_t>(t->second);
    spec.tenant_chosen = true;
  }
  // Sessions keep their own time: one whose call failed learns of it after the client's
  // turnaround, ahead of the simulator's now, and goes on from there, while the others go on
  // from now. Each call is sent at its session's time (stamping every call with the latest time
  // any session reached took that gap off another session's critical path; invariants seed
  // 13377), so the queue is kept in time order, equal times in issue order.
  auto at = ready_.end();
  while (at != ready_.begin() && std::prev(at)->spec.arrival_s > spec.arrival_s) --at;
  ready_.insert(at, {std::move(spec), {session.record().id, frame}});
}

void AgentSource::start_timer(SessionRun& session, int frame, double at_s) {
  push_timer({at_s, 0, TimerKind::kTool, session.record().id, frame, 0});
}

RequestSpec AgentSource::pop() {
  if (ready_.empty()) {
    throw std::logic_error("AgentSource::pop: no call is due (advance_to first)");
  }
  RequestSpec spec = std::move(ready_.front().spec);
  spec.id = next_request_++;
  in_flight_.emplace(spec.id, ready_.front().call);
  ready_.pop_front();
  return spec;
}

void AgentSource::on_request_done(const RequestSpec& request, double now_s) {
  RequestRecord record;
  record.id = request.id;
  record.arrival_s = request.arrival_s;
  record.prompt_tokens = request.prompt_tokens;
  record.output_tokens = request.output_tokens;
  record.first_token_s = now_s;
  record.finish_s = now_s;
  on_request_left(request, record, now_s);
}

void AgentSource::on_request_left(const RequestSpec& request, const RequestRecord& record,
                                  double now_s) {
  const auto call = in_flight_.find(request.id);
  if (call == in_flight_.end()) return;
  const Call c = call->second;
  in_flight_.erase(call);
  sessions_.at(c.session)->on_call_done(c.frame, request, record, now_s);
  settle(c.session);
}

void AgentSource::settle(uint64_t id) {
  const auto it = sessions_.find(id);
  SessionRun& s = *it->second;
  if (!s.ended()) return;
  if (reported_.insert(id).second) {
    metrics_.add(s.record());
    observer_.on_session_done(s.record());
    if (workload_.agent_closed_loop) {
      const double at = s.record().finish_s + workload_.think_time_s.sample(think_rng_);
      push_timer({at, 0, TimerKind::kUserStart, 0, 0, s.record().user});
    }
  }
  if (s.done()) {
    reported_.erase(id);
    session_tenants_.erase(id);
    sessions_.erase(it);
  }
}

bool AgentSource::finished() {
  draw_open_start();
  return sessions_.empty() && ready_.empty() && timers_.empty() && !next_open_s_;
}

}  // namespace servesim
