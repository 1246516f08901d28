// NgramProposer: speculative drafts by prompt lookup (vLLM's "ngram" method,
// vllm/v1/spec_decode/ngram_proposer.py, 0.11): find an earlier occurrence of the sequence's
// last n tokens, n from prompt_lookup_max down to prompt_lookup_min, and propose the up to k
// tokens that followed it. No model, pure token bookkeeping: the engine runs it for real and
// the simulator prices it as CPU time per context token scanned.
//
// Among several occurrences of the longest matching n-gram the latest one wins (the nearest
// context is the likeliest to repeat); vLLM's KMP search may pick another occurrence of the
// same n-gram, so drafts can differ from vLLM's while acceptance semantics do not.
// Stateless apart from its settings; thread-safe.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace servesim {

class NgramProposer {
 public:
  // REQUIRES: 1 <= min_n <= max_n, k >= 1.
  NgramProposer(int min_n, int max_n, int k) : min_n_(min_n), max_n_(max_n), k_(k) {}

  // Appends to `drafts` (not cleared) up to k draft tokens for a sequence whose tokens so far
  // are `tokens`, and returns how many; 0 when no n-gram of the allowed lengths recurs.
  int propose(std::span<const int32_t> tokens, std::vector<int32_t>& drafts) const;

 private:
  int min_n_;
  int max_n_;
  int k_;
};

}  // namespace servesim
