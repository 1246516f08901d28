// SamplingParams: how a request's next tokens are drawn — greedy (temperature 0), or
// temperature sampling restricted to the top-p nucleus — and the seed of its generator. The
// engine takes one per request (engine/runtime/engine.h), the kernels' Sampler draws by it
// (kernels/sampler.h), and the HTTP server reads it from a request body
// (serve/server/openai_request.h): here, below all three, none of them includes another for it.
//
// A plain value; thread-safety: none needed.
#pragma once

#include <cstdint>

namespace servesim {

struct SamplingParams {
  float temperature = 0.0f;  // 0: greedy (argmax, lowest id on ties). REQUIRES: >= 0
  float top_p = 1.0f;        // keep the smallest set of tokens whose mass reaches top_p. (0, 1]
  uint64_t seed = 0;         // the generator's seed
};

}  // namespace servesim
