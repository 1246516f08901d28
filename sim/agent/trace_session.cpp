#include "sim/agent/trace_session.h"

#include <string>

namespace servesim {

TraceSession::TraceSession(uint64_t id, const TracedSession& trace, SessionHost& host, bool spans)
    : trace_(trace),
      host_(host),
      waiting_(trace.calls.size(), 0),
      dependents_(trace.calls.size()),
      start_path_(trace.calls.size()),
      end_path_(trace.calls.size()),
      end_s_(trace.calls.size(), -1) {
  record_.id = id;
  record_.workflow = trace.workflow;
  record_.user = trace.user;
  spans_ = spans;
  if (spans_) call_span_.assign(trace.calls.size(), -1);
  for (size_t c = 0; c < trace.calls.size(); ++c) {
    for (int dep : trace.calls[c].after) {
      ++waiting_[c];
      dependents_[static_cast<size_t>(dep)].push_back(static_cast<int>(c));
    }
  }
}

void TraceSession::start(double now_s) {
  record_.start_s = now_s;
  for (size_t c = 0; c < trace_.calls.size() && !ended_; ++c) {
    if (waiting_[c] == 0) begin(static_cast<int>(c), now_s);
  }
}

void TraceSession::begin(int call, double now_s) {
  const TraceCall& c = trace_.calls[static_cast<size_t>(call)];
  // The dependency that ended last started this call; its path leads here.
  double latest = -1;
  for (int dep : c.after) {
    if (end_s_[static_cast<size_t>(dep)] >= latest) {
      latest = end_s_[static_cast<size_t>(dep)];
      start_path_[static_cast<size_t>(call)] = end_path_[static_cast<size_t>(dep)];
    }
  }
  if (spans_) add_spans(call, now_s, start_path_[static_cast<size_t>(call)].last_span);
  if (c.kind == TraceCallKind::kLlm) {
    issue(call, now_s);
    return;
  }
  if (c.kind == TraceCallKind::kTool) {
    ++record_.tool_calls;
    record_.tool_attempts += c.attempts;
    record_.tool_cache_lookups += c.cached ? 1 : 0;
    record_.tool_cache_hits += c.cache_hit ? 1 : 0;
    record_.cache_lookup_s += c.lookup_s;
  } else {
    ++record_.llm_cache_lookups;
    record_.llm_exact_hits += c.hit == "exact" ? 1 : 0;
    record_.llm_semantic_hits += c.hit == "semantic" ? 1 : 0;
    record_.cache_lookup_s += c.wait_s;
  }
  ++in_flight_;
  host_.start_timer(*this, call, now_s + c.wait_s);
}

int TraceSession::add_span(SpanKind kind, int call, double start_s, double end_s, int after) {
  SessionSpan span;
  span.kind = kind;
  span.step = "calls[" + std::to_string(call) + "]";
  span.start_s = start_s;
  span.end_s = end_s;
  record_.spans.push_back(std::move(span));
  span_after_.push_back(after);
  const int index = static_cast<int>(record_.spans.size() - 1);
  call_span_[static_cast<size_t>(call)] = index;
  return index;
}

void TraceSession::add_spans(int call, double now_s, int after) {
  const TraceCall& c = trace_.calls[static_cast<size_t>(call)];
  switch (c.kind) {
    case TraceCallKind::kLlm:
      add_span(SpanKind::kLlm, call, now_s, SessionSpan::kNever, after);
      return;
    case TraceCallKind::kLookup: {
      const int lookup = add_span(SpanKind::kLookup, call, now_s, now_s + c.wait_s, after);
      record_.spans[static_cast<size_t>(lookup)].hit = c.hit != "miss";
      return;
    }
    case TraceCallKind::kTool:
      break;
  }
  if (c.cached) {
    after = add_span(SpanKind::kLookup, call, now_s, now_s + c.lookup_s, after);
    record_.spans[static_cast<size_t>(after)].hit = c.cache_hit;
    if (c.cache_hit) return;
  }
  const int tool = add_span(SpanKind::kTool, call, now_s + c.lookup_s, now_s + c.wait_s, after);
  record_.spans[static_cast<size_t>(tool)].ok = c.ok;
}

void TraceSession::issue(int call, double now_s) {
  const TraceCall& c = trace_.calls[static_cast<size_t>(call)];
  RequestSpec spec;
  spec.arrival_s = now_s;
  spec.session = host_.new_stream();
  spec.agent_session = record_.id + 1;
  const auto block = static_cast<uint64_t>(kTraceBlockTokens);
  for (size_t i = 0; i < c.prompt_blocks.size(); ++i) {
    const auto [stream, offset] = host_.replay_block(c.prompt_blocks[i], spec.session, i * block);
    PromptSegment* last = spec.context.empty() ? nullptr : &spec.context.back();
    if (last && last->stream == stream &&
        last->offset + static_cast<uint64_t>(last->tokens) == offset) {
      last->tokens += kTraceBlockTokens;
    } else {
      spec.context.push_back({stream, offset, kTraceBlockTokens});
    }
  }
  for (size_t j = 0; j < c.output_blocks.size(); ++j) {
    host_.replay_block(c.output_blocks[j], spec.session, (c.prompt_blocks.size() + j) * block);
  }
  spec.history_tokens = static_cast<int>(c.prompt_blocks.size()) * kTraceBlockTokens;
  spec.prompt_tokens = c.input_tokens;
  spec.output_tokens = c.output_tokens;
  spec.turn = record_.llm_calls;
  spec.client = record_.user;
  ++record_.llm_calls;
  ++in_flight_;
  host_.issue_call(*this, call, std::move(spec));
}

void TraceSession::on_call_done(int frame, const RequestSpec& spec, const RequestRecord& record,
                                double now_s) {
  --in_flight_;
  record_.input_tokens += spec.prompt_tokens;
  record_.output_tokens += record.output_tokens;
  record_.cached_tokens += record.cached_prompt_tokens;
  if (ended_) return;
  const int span = spans_ ? call_span_[static_cast<size_t>(frame)] : -1;
  SessionSpan unrecorded;
  SessionSpan& call = span >= 0 ? record_.spans[static_cast<size_t>(span)] : unrecorded;
  set_llm_times(call, spec, record, now_s);
  if (record.status != RequestOutcome::kOk) {
    end(start_path_[static_cast<size_t>(frame)], now_s, false, record.cause);
    return;
  }
  CriticalPath path = start_path_[static_cast<size_t>(frame)];
  add_llm_call(call, path);
  path.last_span = span;
  if (now_s >= last_answer_s_) {
    last_answer_s_ = now_s;
    record_.first_token_s =
        trace_.calls[static_cast<size_t>(frame)].stream ? record.first_token_s : now_s;
  }
  call_ended(frame, path, now_s);
}

void TraceSession::on_timer(int frame, double now_s) {
  --in_flight_;
  if (ended_) return;
  const TraceCall& c = trace_.calls[static_cast<size_t>(frame)];
  CriticalPath path = start_path_[static_cast<size_t>(frame)];
  if (c.kind == TraceCallKind::kTool) {
    path.tool_s += c.wait_s - c.lookup_s;
    path.cache_s += c.lookup_s;
    ++path.tool_calls;
    if (!c.ok) ++record_.tool_failures;
  } else {
    path.cache_s += c.wait_s;
  }
  if (spans_) path.last_span = call_span_[static_cast<size_t>(frame)];
  call_ended(frame, path, now_s);
}

void TraceSession::call_ended(int call, const CriticalPath& path, double now_s) {
  end_s_[static_cast<size_t>(call)] = now_s;
  end_path_[static_cast<size_t>(call)] = path;
  if (++ended_calls_ == trace_.calls.size()) {
    end(path, now_s, true, FailureCause::kNone);
    return;
  }
  for (int next : dependents_[static_cast<size_t>(call)]) {
    if (--waiting_[static_cast<size_t>(next)] == 0 && !ended_) begin(next, now_s);
  }
}

void TraceSession::end(const CriticalPath& path, double now_s, bool ok, FailureCause cause) {
  ended_ = true;
  record_.finish_s = now_s;
  record_.ok = ok;
  record_.cause = cause;
  if (ok) record_.path = path;
  if (ok && spans_) mark_critical(record_.spans, span_after_, path.last_span);
}

}  // namespace servesim
