// SpeculativeConfig: a deployment's speculative decoding, as vLLM's --speculative-config JSON
// names it (method, model, num_speculative_tokens, prompt_lookup_min/max), plus what the
// simulator needs to predict it: how likely each draft position is to be accepted.
//
// Acceptance is conditional per position: acceptance[i] is the probability that draft i + 1
// is accepted given drafts 1..i were (vLLM's rejection sampler stops at the first rejection).
// A single rate a is the i.i.d. case, every entry a. Invariants after parse/validate:
// acceptance empty (vLLM's form without servesim's keys: enough for memory, refused by the
// simulator) or acceptance.size() == num_speculative_tokens, every entry in [0, 1].
//
// Plain value (the draft model's spec is shared, immutable); thread-compatible.
#pragma once

#include <cstdint>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "models/model_spec.h"

namespace servesim {

class Catalog;

// Most draft tokens per step servesim accepts; the scheduler's kMaxSpeculativeTokens
// (engine/sched/scheduler_config.h) is the same number.
inline constexpr int kMaxSpeculativeDraftTokens = 16;

enum class SpeculativeMethod {
  kNgram,       // prompt lookup: drafts copied from an earlier match of the last n-gram (CPU)
  kDraftModel,  // a smaller model of the same vocabulary proposes k tokens, one pass each
  kMtp,         // multi-token-prediction head(s) of the model itself (DeepSeek-V3, Qwen3-Next)
  kEagle,       // an EAGLE head: one extra decoder layer on the target's hidden states
};

std::string_view speculative_method_name(SpeculativeMethod method);  // vLLM's "method" value

struct SpeculativeConfig {
  SpeculativeMethod method = SpeculativeMethod::kNgram;
  int num_speculative_tokens = 0;  // k; REQUIRES: 1..kMaxSpeculativeTokens
  // ngram only: n-gram lengths matched, tokens (vLLM defaults: both 5; one given sets both).
  int prompt_lookup_min = 0;
  int prompt_lookup_max = 0;
  std::string draft_model_name;                  // draft_model only: catalog name (vLLM "model")
  std::shared_ptr<const ModelSpec> draft_model;  // resolved draft_model_name
  std::vector<double> acceptance;                // per position, conditional; see the file comment
  // ngram only: the probability that prompt lookup finds a match after a decode step, so the
  // next step verifies drafts; otherwise it decodes one token (servesim's "match_rate"; a
  // draft model proposes every step). In (0, 1].
  double match_rate = 1;

  // Reads a JSON object in vLLM's form plus servesim's acceptance keys ("acceptance_rate": a,
  // or "acceptance_per_position": [p1..pk]). `catalog` resolves a draft model (nullptr: the
  // name is kept unresolved). Strict: unknown keys and bad values are ConfigErrors naming
  // context and the key.
  static SpeculativeConfig from_json(const nlohmann::json& object, const std::string& context,
                                     const Catalog* catalog);
  // The same from the text of a --speculative-config flag.
  static SpeculativeConfig from_text(const std::string& text, const std::string& flag,
                                     const Catalog* catalog);

  // Checks against the target model (draft vocabulary, MTP heads); ConfigError with the fix.
  void validate(const ModelSpec& target) const;

  // Expected tokens a verified sequence gains per step: 1 + sum_i prod_{j<=i} acceptance[j];
  // (1 - a^(k+1)) / (1 - a) for a fixed rate a.
  double expected_tokens_per_step() const;
  // The same over every decode step, those without a match included: 1 + match_rate x (E - 1).
  double expected_tokens_per_decode() const;

  // What an engine run measured, as the simulator's keys: match_rate = num_drafts /
  // num_decodes (ngram; 1 for other methods), and per position the conditional acceptance
  // accepted[p] / accepted[p - 1] (accepted[-1] = num_drafts; 0 where nothing reached it).
  // With these, E[tokens per decode] equals the run's own. REQUIRES: accepted.size() == k,
  // num_drafts > 0 (a run without drafts has nothing to say about acceptance).
  void set_measured_acceptance(int64_t num_decodes, int64_t num_drafts,
                               std::span<const int64_t> accepted);
  // vllm_json() plus servesim's acceptance keys (acceptance_per_position; match_rate when not
  // 1): a block from_json reads back, for a scenario's engine.speculative.
  nlohmann::json simulator_json() const;
  // What to pass vLLM: {"method": ..., "num_speculative_tokens": k, ...} without servesim's
  // acceptance keys.
  nlohmann::json vllm_json() const;
};

}  // namespace servesim
