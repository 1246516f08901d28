// embedding: copies the table row of each token id. Stateless; thread-safe.
#pragma once

#include <cstdint>

namespace servesim {

// table: (vocab, dim); ids: (num_tokens), each in [0, vocab); out: (num_tokens, dim).
// Throws std::out_of_range for an id outside the vocabulary (a caller bug: prompts are
// checked against the vocabulary before they reach the runner).
void embedding(const float* table, int64_t vocab, int64_t dim, const int32_t* ids,
               int64_t num_tokens, float* out);

}  // namespace servesim
