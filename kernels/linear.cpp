#include "kernels/linear.h"

#include "kernels/isa_kernels.h"

namespace servesim {

void linear(const float* x, const float* w, const float* bias, float* y, int64_t m, int64_t n,
            int64_t k, ThreadPool& pool) {
  active_isa_kernels().linear(x, w, bias, y, m, n, k, pool);
}

}  // namespace servesim
