#include "kernels/embedding.h"

#include <cstring>
#include <stdexcept>
#include <string>

namespace servesim {

void embedding(const float* table, int64_t vocab, int64_t dim, const int32_t* ids,
               int64_t num_tokens, float* out) {
  for (int64_t t = 0; t < num_tokens; ++t) {
    if (ids[t] < 0 || ids[t] >= vocab) {
      throw std::out_of_range("embedding: token id " + std::to_string(ids[t]) +
                              " outside vocabulary of " + std::to_string(vocab));
    }
    std::memcpy(out + t * dim, table + ids[t] * dim, static_cast<size_t>(dim) * sizeof(float));
  }
}

}  // namespace servesim
