#include "sim/agent/agent_session.h"

#include <algorithm>

#include "sim/agent/block_hasher.h"

namespace servesim {
namespace {

const std::string& step_name(const StepSpec& step) {
  return step.id.empty() ? step.path : step.id;
}

}  // namespace

void set_llm_times(SessionSpan& span, const RequestSpec& spec, const RequestRecord& record,
                   double now_s) {
  span.start_s = spec.arrival_s;
  span.end_s = now_s;
  span.scheduled_s = record.first_scheduled_s;
  span.first_token_s = record.first_token_s;
  span.ok = record.status == RequestOutcome::kOk;
  const RequestSegments& s = record.segments;
  span.queue_s = s.engine_wait_s();
  span.prefill_s = s.engine_prefill_s();
  span.decode_s = s.decode_s;
}

void add_llm_call(const SessionSpan& span, CriticalPath& path) {
  path.llm_queue_s += span.queue_s;
  path.prefill_s += span.prefill_s;
  path.decode_s += span.decode_s;
  path.service_s += (span.end_s - span.start_s) - span.queue_s - span.prefill_s - span.decode_s;
  ++path.llm_calls;
}

void mark_critical(std::vector<SessionSpan>& spans, const std::vector<int>& after, int last) {
  for (int s = last; s >= 0; s = after[static_cast<size_t>(s)]) {
    spans[static_cast<size_t>(s)].critical = true;
  }
}

AgentSession::AgentSession(uint64_t id, const WorkflowSpec& workflow, uint64_t workflow_group,
                           uint32_t user, SessionHost& host, bool trace, bool spans)
    : workflow_group_(workflow_group),
      workflow_(workflow),
      host_(host),
      outcomes_(static_cast<size_t>(workflow.num_steps), int8_t{-1}) {
  record_.id = id;
  record_.workflow = workflow.name;
  record_.user = user;
  tracing_ = trace;
  spans_ = spans;
  if (tracing_) {
    trace_.session = id;
    trace_.workflow = workflow.name;
    trace_.user = user;
  }
}

void AgentSession::start(double now_s) {
  record_.start_s = now_s;
  trace_.start_s = now_s;
  contexts_.emplace_back();
  begin(new_frame(workflow_.root, -1, 0, CriticalPath{}, {}), now_s);
}

int AgentSession::new_frame(const StepSpec& step, int parent, int context, const CriticalPath& path,
                            std::vector<int> deps) {
  Frame f;
  f.step = &step;
  f.parent = parent;
  f.context = context;
  f.path = path;
  f.deps = std::move(deps);
  if (step.subtask) f.subtask_mark = contexts_[static_cast<size_t>(context)].mark();
  frames_.push_back(std::move(f));
  return static_cast<int>(frames_.size() - 1);
}

void AgentSession::begin(int frame, double now_s) {
  const Frame& f = frames_[static_cast<size_t>(frame)];
  const StepSpec& step = *f.step;
  switch (step.kind) {
    case StepKind::kLlm:
      begin_llm(frame, now_s);
      return;
    case StepKind::kTool:
      begin_tool(frame, now_s);
      return;
    case StepKind::kParallel:
      begin_parallel(frame, now_s);
      return;
    case StepKind::kSequence:
    case StepKind::kLoop:
      if (step.children.empty()) {
        if (tracing_) ends_ = f.deps;
        finish(frame, f.path, now_s);
      } else {
        start_child(frame, 0, f.context, f.path, f.deps, now_s);
      }
      return;
    case StepKind::kBranch: {
      size_t arm = step.children.size();  // none
      if (step.condition_step >= 0) {
        const int8_t outcome = outcomes_[static_cast<size_t>(step.condition_step)];
        const bool then = step.run_if_failed ? outcome == 0 : outcome == 1;
        arm = then ? 0 : 1;
      } else {
        double u = host_.rng(SessionHost::Purpose::kBranch).uniform();
        for (size_t i = 0; i < step.arm_probability.size(); ++i) {
          if (u < step.arm_probability[i]) {
            arm = i;
            break;
          }
          u -= step.arm_probability[i];
        }
      }
      if (arm < step.children.size()) {
        start_child(frame, arm, f.context, f.path, f.deps, now_s);
      } else {
        if (tracing_) ends_ = f.deps;
        finish(frame, f.path, now_s);
      }
      return;
    }
  }
}

void AgentSession::start_child(int frame, size_t child, int context, const CriticalPath& path,
                               const std::vector<int>& deps, double now_s) {
  const StepSpec& step = frames_[static_cast<size_t>(frame)].step->children[child];
  const int started = new_frame(step, frame, context, path, tracing_ ? deps : std::vector<int>{});
  if (nesting_ >= kMaxNesting) {
    deferred_.emplace_back(started, now_s);
    return;
  }
  ++nesting_;
  begin(started, now_s);
  --nesting_;
  if (nesting_ == 0) run_deferred();
}

void AgentSession::run_deferred() {
  while (!deferred_.empty()) {
    const auto [frame, at_s] = deferred_.front();
    deferred_.pop_front();
    if (ended_) continue;
    ++nesting_;
    begin(frame, at_s);
    --nesting_;
  }
}

void AgentSession::begin_parallel(int frame, double now_s) {
  const StepSpec& step = *frames_[static_cast<size_t>(frame)].step;
  const size_t n = step.children.size();
  const size_t limit =
      step.max_concurrency > 0 ? std::min(n, static_cast<size_t>(step.max_concurrency)) : n;
  for (size_t i = 0; i < n; ++i) {
    AgentContext branch = contexts_[static_cast<size_t>(frames_[frame].context)].fork();
    contexts_.push_back(std::move(branch));
    frames_[static_cast<size_t>(frame)].child_contexts.push_back(
        static_cast<int>(contexts_.size() - 1));
  }
  frames_[static_cast<size_t>(frame)].next_child = limit;
  const CriticalPath path = frames_[static_cast<size_t>(frame)].path;
  const std::vector<int> deps = frames_[static_cast<size_t>(frame)].deps;
  for (size_t i = 0; i < limit && !ended_; ++i) {
    start_child(frame, i, frames_[static_cast<size_t>(frame)].child_contexts[i], path, deps, now_s);
  }
}

void AgentSession::begin_llm(int frame, double now_s) {
  Frame& f = frames_[static_cast<size_t>(frame)];
  const LlmStepSpec& llm = f.step->llm;
  f.new_tokens = llm.new_tokens.sample(host_.rng(SessionHost::Purpose::kLlmNewTokens));
  f.output_tokens = llm.output_tokens.sample(host_.rng(SessionHost::Purpose::kLlmOutput));
  f.deployment = llm.deployment;
  if (!llm.cache.enabled) {
    issue(frame, f.new_tokens, f.output_tokens, now_s);
    return;
  }
  const LlmCacheHit hit = llm.cache.draw(host_.rng(SessionHost::Purpose::kCacheHit));
  f.cache_hit = hit != LlmCacheHit::kMiss;
  f.lookup_s = llm.cache.lookup_s.sample(host_.rng(SessionHost::Purpose::kCacheLookup));
  ++record_.llm_cache_lookups;
  record_.llm_exact_hits += hit == LlmCacheHit::kExact ? 1 : 0;
  record_.llm_semantic_hits += hit == LlmCacheHit::kSemantic ? 1 : 0;
  record_.cache_lookup_s += f.lookup_s;
  if (spans_) {
    f.lookup_span = add_span(SpanKind::kLookup, step_name(*f.step), now_s, now_s + f.lookup_s,
                             f.path.last_span);
    record_.spans[static_cast<size_t>(f.lookup_span)].hit = f.cache_hit;
  }
  if (tracing_) {
    f.lookup_call = trace_call(TraceCallKind::kLookup, f.deps);
    TraceCall& lookup = trace_.calls[static_cast<size_t>(f.lookup_call)];
    lookup.wait_s = f.lookup_s;
    lookup.hit = hit == LlmCacheHit::kExact      ? "exact"
                 : hit == LlmCacheHit::kSemantic ? "semantic"
                                                 : "miss";
  }
  if (f.lookup_s == 0) {
    llm_lookup_done(frame, now_s);
    return;
  }
  ++in_flight_;
  host_.start_timer(*this, frame, now_s + f.lookup_s);
}

void AgentSession::llm_lookup_done(int frame, double now_s) {
  Frame& f = frames_[static_cast<size_t>(frame)];
  f.path.cache_s += f.lookup_s;
  f.path.last_span = f.lookup_span;
  if (!f.cache_hit) {
    issue(frame, f.new_tokens, f.output_tokens, now_s);
    return;
  }
  const uint64_t stream = host_.new_stream();
  const PromptSegment turn{stream, 0, f.new_tokens + f.output_tokens};
  const PromptSegment answer{stream, static_cast<uint64_t>(f.new_tokens), f.output_tokens};
  ends_at(f.lookup_call);
  answered(frame, f.path, turn, answer, now_s, now_s);
}

int AgentSession::add_span(SpanKind kind, const std::string& step, double start_s, double end_s,
                           int after) {
  SessionSpan span;
  span.kind = kind;
  span.step = step;
  span.start_s = start_s;
  span.end_s = end_s;
  record_.spans.push_back(std::move(span));
  span_after_.push_back(after);
  return static_cast<int>(record_.spans.size() - 1);
}

void AgentSession::issue(int frame, int new_tokens, int output_tokens, double now_s) {
  const AgentContext& context = contexts_[static_cast<size_t>(frames_[frame].context)];
  RequestSpec spec;
  spec.arrival_s = now_s;
  spec.prefix_group = workflow_group_;
  spec.shared_prefix_tokens = workflow_.system_prompt_tokens;
  spec.context = context.segments();
  spec.history_tokens = context.tokens();
  spec.prompt_tokens = workflow_.system_prompt_tokens + context.tokens() + new_tokens;
  spec.output_tokens = output_tokens;
  spec.session = host_.new_stream();
  spec.agent_session = record_.id + 1;
  spec.deployment = static_cast<uint32_t>(frames_[frame].deployment);
  spec.turn = record_.llm_calls;
  spec.client = record_.user;
  ++record_.llm_calls;
  ++in_flight_;
  if (spans_) {
    Frame& f = frames_[static_cast<size_t>(frame)];
    const std::string& name = step_name(*f.step);
    f.span = add_span(SpanKind::kLlm, f.summarizing ? name + " (summary)" : name, now_s,
                      SessionSpan::kNever, f.path.last_span);
  }
  if (tracing_) {
    Frame& f = frames_[static_cast<size_t>(frame)];
    // A summary waits for the answer it summarises; a call after a lookup for the lookup.
    std::vector<int> after = f.summarizing        ? std::vector<int>{f.call}
                             : f.lookup_call >= 0 ? std::vector<int>{f.lookup_call}
                                                  : f.deps;
    f.call = trace_call(TraceCallKind::kLlm, std::move(after));
    TraceCall& call = trace_.calls[static_cast<size_t>(f.call)];
    call.input_tokens = spec.prompt_tokens;
    call.output_tokens = spec.output_tokens;
    call.stream = f.summarizing || f.step->llm.stream;
  }
  host_.issue_call(*this, frame, std::move(spec));
}

void AgentSession::on_call_done(int frame, const RequestSpec& spec, const RequestRecord& record,
                                double now_s) {
  --in_flight_;
  record_.input_tokens += spec.prompt_tokens;
  record_.output_tokens += record.output_tokens;
  record_.cached_tokens += record.cached_prompt_tokens;
  if (ended_) return;
  Frame& f = frames_[static_cast<size_t>(frame)];
  if (tracing_) trace_blocks(spec, record.output_tokens, trace_.calls[static_cast<size_t>(f.call)]);
  SessionSpan unrecorded;
  SessionSpan& call = f.span >= 0 ? record_.spans[static_cast<size_t>(f.span)] : unrecorded;
  set_llm_times(call, spec, record, now_s);
  if (record.status != RequestOutcome::kOk) {
    if (!f.summarizing && f.step->llm.fallback >= 0 && f.deployment != f.step->llm.fallback) {
      fall_back(frame, call, now_s);
      return;
    }
    if (f.summarizing || !f.step->llm.optional) {
      end(f.path, now_s, false, record.cause);
      return;
    }
    // Degrade: the step ends without its answer; its failed call's time (all outside the
    // engine's work) stays on the path.
    CriticalPath path = f.path;
    add_llm_call(call, path);
    path.last_span = f.span;
    ++record_.skipped_steps;
    ends_at(f.call);
    finish(frame, path, now_s);
    return;
  }
  CriticalPath path = f.path;
  add_llm_call(call, path);
  path.last_span = f.span;

  // The call's new tokens start where its context ends; its answer follows them in its stream.
  const int before = workflow_.system_prompt_tokens + spec.history_tokens;
  const int new_tokens = spec.prompt_tokens - before;
  const PromptSegment answer{spec.session, static_cast<uint64_t>(before + new_tokens),
                             record.output_tokens};
  if (f.summarizing) {
    f.summarizing = false;
    contexts_[static_cast<size_t>(f.context)].replace(answer);
    ends_at(f.call);
    finish(frame, path, now_s);
    return;
  }
  const PromptSegment turn{spec.session, static_cast<uint64_t>(before),
                           new_tokens + record.output_tokens};
  ends_at(f.call);
  answered(frame, path, turn, answer, f.step->llm.stream ? record.first_token_s : now_s, now_s);
}

void AgentSession::fall_back(int frame, const SessionSpan& failed, double now_s) {
  Frame& f = frames_[static_cast<size_t>(frame)];
  // The failed call's time (all outside the engine's work) stays on the path, before the call
  // the fallback deployment answers with the same prompt and lengths.
  add_llm_call(failed, f.path);
  f.path.last_span = f.span;
  f.deployment = f.step->llm.fallback;
  ++record_.fallback_calls;
  if (tracing_) {
    f.deps.assign(1, f.call);
    f.lookup_call = -1;
  }
  issue(frame, f.new_tokens, f.output_tokens, now_s);
}

void AgentSession::answered(int frame, CriticalPath path, const PromptSegment& turn,
                            const PromptSegment& answer, double first_token_s, double now_s) {
  Frame& f = frames_[static_cast<size_t>(frame)];
  AgentContext& context = contexts_[static_cast<size_t>(f.context)];
  context.append(turn);
  context.note_answer(answer);
  if (now_s >= last_answer_s_) {
    last_answer_s_ = now_s;
    record_.first_token_s = first_token_s;
  }
  const ContextPolicySpec& policy = workflow_.context;
  if (policy.summarize_every > 0 && ++llm_calls_since_summary_ >= policy.summarize_every) {
    llm_calls_since_summary_ = 0;
    f.path = path;
    f.summarizing = true;
    issue(frame,
          policy.summary_prompt_tokens.sample(host_.rng(SessionHost::Purpose::kLlmNewTokens)),
          policy.summary_tokens, now_s);
    return;
  }
  finish(frame, path, now_s);
}

void AgentSession::begin_tool(int frame, double now_s) {
  Frame& f = frames_[static_cast<size_t>(frame)];
  const ToolStepSpec& tool = f.step->tool;
  ++record_.tool_calls;
  if (!tool.cache.enabled) {
    run_tool(frame, now_s);
    return;
  }
  f.cache_key = tool.cache.draw_key(host_.rng(SessionHost::Purpose::kCacheKey));
  f.lookup_s = tool.cache.lookup_s.sample(host_.rng(SessionHost::Purpose::kCacheLookup));
  f.cache_hit = host_.tool_cache(*f.step).lookup(f.cache_key, now_s);
  ++record_.tool_cache_lookups;
  record_.tool_cache_hits += f.cache_hit ? 1 : 0;
  record_.cache_lookup_s += f.lookup_s;
  if (spans_) {
    f.lookup_span = add_span(SpanKind::kLookup, step_name(*f.step), now_s, now_s + f.lookup_s,
                             f.path.last_span);
    record_.spans[static_cast<size_t>(f.lookup_span)].hit = f.cache_hit;
  }
  if (!f.cache_hit) {
    run_tool(frame, now_s + f.lookup_s);
    return;
  }
  f.tool_ok = true;
  f.tool_s = 0;
  f.tool_result_tokens = tool.result_tokens.sample(host_.rng(SessionHost::Purpose::kToolResult));
  trace_tool(frame, 0);
  ++in_flight_;
  host_.start_timer(*this, frame, now_s + f.lookup_s);
}

void AgentSession::trace_tool(int frame, int attempts) {
  if (!tracing_) return;
  Frame& f = frames_[static_cast<size_t>(frame)];
  f.call = trace_call(TraceCallKind::kTool, f.deps);
  TraceCall& call = trace_.calls[static_cast<size_t>(f.call)];
  call.wait_s = f.lookup_s + f.tool_s;
  call.lookup_s = f.lookup_s;
  call.cached = f.step->tool.cache.enabled;
  call.attempts = attempts;
  call.ok = f.tool_ok;
  call.cache_hit = f.cache_hit;
}

void AgentSession::run_tool(int frame, double start_s) {
  Frame& f = frames_[static_cast<size_t>(frame)];
  const ToolStepSpec& tool = f.step->tool;
  Rng& latency = host_.rng(SessionHost::Purpose::kToolLatency);
  Rng& failure = host_.rng(SessionHost::Purpose::kToolFailure);
  f.tool_s = 0;
  f.tool_ok = false;
  int attempts = 0;
  for (int attempt = 0; attempt <= tool.retries && !f.tool_ok; ++attempt) {
    f.tool_s += (attempt == 0 ? tool.latency_s : tool.retry_latency_s).sample(latency);
    f.tool_ok = !(failure.uniform() < tool.failure_probability);
    ++attempts;
  }
  record_.tool_attempts += attempts;
  if (spans_) {
    f.span = add_span(SpanKind::kTool, step_name(*f.step), start_s, start_s + f.tool_s,
                      f.lookup_span >= 0 ? f.lookup_span : f.path.last_span);
    record_.spans[static_cast<size_t>(f.span)].ok = f.tool_ok;
  }
  f.tool_result_tokens = tool.result_tokens.sample(host_.rng(SessionHost::Purpose::kToolResult));
  trace_tool(frame, attempts);
  ++in_flight_;
  host_.start_timer(*this, frame, start_s + f.tool_s);
}

void AgentSession::on_timer(int frame, double now_s) {
  --in_flight_;
  if (ended_) return;
  if (frames_[static_cast<size_t>(frame)].step->kind == StepKind::kLlm) {
    llm_lookup_done(frame, now_s);
    return;
  }
  tool_done(frame, now_s);
}

void AgentSession::tool_done(int frame, double now_s) {
  const Frame& f = frames_[static_cast<size_t>(frame)];
  outcomes_[static_cast<size_t>(f.step->index)] = f.tool_ok ? 1 : 0;
  if (!f.tool_ok) ++record_.tool_failures;
  if (f.step->tool.cache.enabled && !f.cache_hit && f.tool_ok) {
    host_.tool_cache(*f.step).store(f.cache_key, now_s);
  }
  const int trim = workflow_.context.max_tool_result_tokens;
  const int tokens = trim > 0 ? std::min(trim, f.tool_result_tokens) : f.tool_result_tokens;
  contexts_[static_cast<size_t>(f.context)].append({host_.new_stream(), 0, tokens});
  CriticalPath path = f.path;
  path.tool_s += f.tool_s;
  path.cache_s += f.lookup_s;
  ++path.tool_calls;
  // A cache hit ran no tool: the lookup is the step's last span.
  path.last_span = f.span >= 0 ? f.span : f.lookup_span;
  ends_at(f.call);
  finish(frame, path, now_s);
}

void AgentSession::finish(int frame, CriticalPath path, double now_s) {
  const Frame& f = frames_[static_cast<size_t>(frame)];
  if (f.step->subtask) {
    contexts_[static_cast<size_t>(f.context)].clear_to(f.subtask_mark,
                                                       workflow_.context.subtask_summary_tokens);
  }
  if (f.parent < 0) {
    end(path, now_s, true, FailureCause::kNone);
    return;
  }
  child_done(f.parent, path, now_s);
}

void AgentSession::child_done(int frame, const CriticalPath& path, double now_s) {
  Frame& f = frames_[static_cast<size_t>(frame)];
  const StepSpec& step = *f.step;
  switch (step.kind) {
    case StepKind::kSequence:
      if (++f.next_child < step.children.size()) {
        start_child(frame, f.next_child, f.context, path, ends_, now_s);
      } else {
        finish(frame, path, now_s);
      }
      return;
    case StepKind::kLoop: {
      const bool succeeded =
          step.until_step >= 0 && outcomes_[static_cast<size_t>(step.until_step)] == 1;
      if (!succeeded && ++f.iteration < step.max_iterations) {
        start_child(frame, 0, f.context, path, ends_, now_s);
      } else {
        finish(frame, path, now_s);
      }
      return;
    }
    case StepKind::kParallel:
      ++f.finished_children;
      f.last_path = path;
      if (tracing_) f.group_ends.insert(f.group_ends.end(), ends_.begin(), ends_.end());
      if (f.next_child < step.children.size()) {
        const size_t next = f.next_child++;
        start_child(frame, next, f.child_contexts[next], path, ends_, now_s);
        return;
      }
      if (f.finished_children == step.children.size()) {
        for (int branch : f.child_contexts) {
          contexts_[static_cast<size_t>(f.context)].merge(contexts_[static_cast<size_t>(branch)]);
        }
        if (tracing_) {
          std::sort(f.group_ends.begin(), f.group_ends.end());
          ends_ = f.group_ends;
        }
        finish(frame, f.last_path, now_s);
      }
      return;
    default:  // a branch, or a leaf, which has no children
      finish(frame, path, now_s);
      return;
  }
}

void AgentSession::end(const CriticalPath& path, double now_s, bool ok, FailureCause cause) {
  ended_ = true;
  record_.finish_s = now_s;
  record_.ok = ok;
  record_.cause = cause;
  if (ok) record_.path = path;
  if (ok && spans_) mark_critical(record_.spans, span_after_, path.last_span);
  if (tracing_) record_.trace_json = session_trace_line(trace_);
}

int AgentSession::trace_call(TraceCallKind kind, std::vector<int> after) {
  TraceCall call;
  call.kind = kind;
  call.after = std::move(after);
  trace_.calls.push_back(std::move(call));
  return static_cast<int>(trace_.calls.size() - 1);
}

void AgentSession::ends_at(int call) {
  if (tracing_) ends_.assign(1, call);
}

// The block ids of the call's prompt and answer: its tokens as runs of (source, position)
// — the system prompt's group, then the context segments, its new tokens and its answer in
// its own stream — cut into kTraceBlockTokens-token blocks, each hashed with the block before
// it. Contiguous pieces of one stream within a block are hashed as one, so the same tokens
// hash the same however the context split them.
void AgentSession::trace_blocks(const RequestSpec& spec, int output_tokens, TraceCall& call) {
  BlockHasher hasher;  // sources: 0 the group's prefix, 1 a token stream
  if (spec.shared_prefix_tokens > 0) {
    hasher.add(0, spec.prefix_group, 0, spec.shared_prefix_tokens);
  }
  for (const PromptSegment& p : spec.context) hasher.add(1, p.stream, p.offset, p.tokens);
  const int before = spec.shared_prefix_tokens + spec.history_tokens;
  hasher.add(1, spec.session, static_cast<uint64_t>(before), spec.prompt_tokens - before);
  hasher.add(1, spec.session, static_cast<uint64_t>(spec.prompt_tokens), output_tokens);
  std::vector<uint64_t> ids;
  for (const BlockHashValue& h : hasher.hashes()) ids.push_back(host_.trace_block_id(h.lo, h.hi));
  const size_t prompt_blocks =
      std::min(ids.size(), static_cast<size_t>(spec.prompt_tokens / kTraceBlockTokens));
  call.prompt_blocks.assign(ids.begin(), ids.begin() + static_cast<std::ptrdiff_t>(prompt_blocks));
  call.output_blocks.assign(ids.begin() + static_cast<std::ptrdiff_t>(prompt_blocks), ids.end());
}

}  // namespace servesim
