// AgentContext: what an agent session has accumulated for its next LLM call — a list of
// PromptSegments (each earlier call's new tokens and answer, each tool result) that follow the
// workflow's system prompt. Real token content: a call's prompt and its answer enter as the
// very ids the engine read and generated, so the next call hits the prefix cache on them.
//
// Parallel steps fork the context: each branch of a parallel group starts from the group's
// context and adds its own segments; merge() appends a finished branch's additions (its whole
// context if a summary replaced it) to the group's. replace() (a summary) drops the history.
// A subtask's end (clear_to) truncates to the context at its start and keeps the first
// keep_tokens of the last answer given since.
// Invariant: tokens() is the sum of the segments' tokens. Value type; thread-safety: none.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "sim/workload/request_source.h"

namespace servesim {

class AgentContext {
 public:
  struct Mark {
    size_t segments = 0;
    int version = 0;
    uint64_t answers = 0;
  };

  const std::vector<PromptSegment>& segments() const { return segments_; }
  int tokens() const { return tokens_; }

  void append(const PromptSegment& segment);
  // An LLM call's answer, which a subtask's end may keep (it is appended separately).
  void note_answer(const PromptSegment& answer);
  // The history becomes `summary` alone.
  void replace(const PromptSegment& summary);

  AgentContext fork() const;
  void merge(const AgentContext& branch);

  Mark mark() const { return {segments_.size(), version_, answers_}; }
  // Truncates to the context at `m` (to the summary that replaced it, if one did) and appends
  // the first keep_tokens of the last answer noted since `m`, if any.
  void clear_to(const Mark& m, int keep_tokens);

 private:
  void truncate(size_t segments);

  std::vector<PromptSegment> segments_;
  int tokens_ = 0;
  size_t base_ = 0;        // segments inherited from the parent at fork()
  bool replaced_ = false;  // a summary replaced the history since fork()
  int version_ = 0;        // replace() count
  PromptSegment last_answer_;
  uint64_t answers_ = 0;          // note_answer() count
  uint64_t answers_at_fork_ = 0;  // answers_ of the parent at fork()
};

}  // namespace servesim
