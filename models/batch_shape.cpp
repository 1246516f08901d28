#include "models/batch_shape.h"

#include <algorithm>

namespace servesim {
namespace {

// Sum over query positions p = context + 1 .. context + new of min(p, window): the keys each
// new token attends to when attention looks back at most `window` tokens.
double windowed_pairs(int64_t num_new, int64_t context, int64_t window) {
  const int64_t first = context + 1;
  const int64_t last = context + num_new;
  if (last <= window) return static_cast<double>(first + last) * static_cast<double>(num_new) / 2;
  if (first > window) return static_cast<double>(num_new) * static_cast<double>(window);
  const double ramp =
      static_cast<double>(first + window) * static_cast<double>(window - first + 1) / 2;
  return ramp + static_cast<double>(last - window) * static_cast<double>(window);
}

}  // namespace

void BatchShape::add_sequence(int num_new_tokens, int num_context_tokens, bool is_prefill,
                              bool samples, int num_spec_tokens) {
  const int64_t n = num_new_tokens;
  const int64_t c = num_context_tokens;
  const int64_t w = sliding_window > 0 ? sliding_window : c + n;
  ++num_seqs;
  num_tokens += n;
  if (is_prefill) {
    ++num_prefill_seqs;
    prefill_tokens += n;
    const double pairs =
        static_cast<double>(n) * (static_cast<double>(c) + static_cast<double>(n + 1) / 2);
    prefill_attention_pairs += pairs;
    prefill_kv_tokens += c + n;
    windowed_prefill_attention_pairs += sliding_window > 0 ? windowed_pairs(n, c, w) : pairs;
    windowed_prefill_kv_tokens += std::min(c, w) + n;
  } else {
    ++num_decode_seqs;
    decode_tokens += n;
    decode_context_tokens += c + n;
    windowed_decode_context_tokens += std::min(c + n, w);
  }
  if (samples) num_sampled += 1 + num_spec_tokens;
}

void BatchShape::clear() {
  const int window = sliding_window;
  *this = BatchShape{};
  sliding_window = window;
}

}  // namespace servesim
