#include "sim/agent/agent_context.h"

#include <algorithm>

namespace servesim {

void AgentContext::append(const PromptSegment& segment) {
  if (segment.tokens <= 0) return;
  segments_.push_back(segment);
  tokens_ += segment.tokens;
}

void AgentContext::note_answer(const PromptSegment& answer) {
  last_answer_ = answer;
  ++answers_;
}

void AgentContext::replace(const PromptSegment& summary) {
  segments_.clear();
  tokens_ = 0;
  base_ = 0;
  replaced_ = true;
  ++version_;
  append(summary);
}

AgentContext AgentContext::fork() const {
  AgentContext branch = *this;
  branch.base_ = segments_.size();
  branch.replaced_ = false;
  branch.answers_at_fork_ = answers_;
  return branch;
}

void AgentContext::merge(const AgentContext& branch) {
  const size_t from = branch.replaced_ ? 0 : branch.base_;
  for (size_t i = from; i < branch.segments_.size(); ++i) append(branch.segments_[i]);
  if (branch.answers_ > branch.answers_at_fork_) {
    last_answer_ = branch.last_answer_;
    answers_ += branch.answers_ - branch.answers_at_fork_;
  }
}

void AgentContext::truncate(size_t segments) {
  while (segments_.size() > segments) {
    tokens_ -= segments_.back().tokens;
    segments_.pop_back();
  }
  base_ = std::min(base_, segments_.size());
}

void AgentContext::clear_to(const Mark& m, int keep_tokens) {
  truncate(m.version == version_ ? m.segments : std::min<size_t>(1, segments_.size()));
  if (answers_ > m.answers && keep_tokens > 0) {
    PromptSegment kept = last_answer_;
    kept.tokens = std::min(kept.tokens, keep_tokens);
    append(kept);
  }
}

}  // namespace servesim
