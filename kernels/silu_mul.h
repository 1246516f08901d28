// silu_mul: out = silu(gate) * up, the SwiGLU activation of Llama's MLP. Stateless;
// thread-safe.
#pragma once

#include <cstdint>

namespace servesim {

// gate, up, out: (n); out may alias gate or up.
void silu_mul(const float* gate, const float* up, float* out, int64_t n);

}  // namespace servesim
