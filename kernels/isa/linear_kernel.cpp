// Compiled once per instruction-set level; see kernels/isa_kernels.h.
#include <Eigen/Core>
#include <algorithm>

#include "kernels/isa_kernels.h"

namespace servesim::SERVESIM_ISA_NS {
namespace {

using RowMatrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using Strided = Eigen::OuterStride<>;

// Output features handed to a thread at a time: a multiple of the AVX-512 width, so no two
// threads write into the same cache line of a row of y.
constexpr int64_t kColumnGrain = 16;
// Up to this many rows of x (a decode batch), Eigen's GEMM spends more time packing W than
// multiplying: measured on the 100M model's MLP shapes, 10 ms against 4 ms of plain dot
// products at 4 rows, 14.6 against 11.7 ms at 16.
constexpr int64_t kSkinnyRows = 16;

}  // namespace

void linear(const float* x, const float* w, const float* bias, float* y, int64_t m, int64_t n,
            int64_t k, ThreadPool& pool) {
  pool.parallel_for(
      n,
      [&](int64_t begin, int64_t end) {
        const int64_t cols = end - begin;
        Eigen::Map<const RowMatrix> xm(x, m, k);
        Eigen::Map<const RowMatrix> wm(w + begin * k, cols, k);
        Eigen::Map<RowMatrix, 0, Strided> ym(y + begin, m, cols, Strided(n));
        if (m == 1) {
          // GEMV: Eigen's row-major matrix times vector streams W once, which is all decode
          // can hope for.
          Eigen::Map<Eigen::VectorXf, 0, Eigen::InnerStride<>> yv(y + begin, cols,
                                                                  Eigen::InnerStride<>(1));
          yv.noalias() = wm * xm.row(0).transpose();
        } else if (m <= kSkinnyRows) {
          // Dot products of x's rows with 16 rows of W at a time: each W row is read from
          // memory once and reused from L1 for every row of x.
          for (int64_t c = 0; c < cols; c += kColumnGrain) {
            const int64_t width = std::min(kColumnGrain, cols - c);
            ym.middleCols(c, width).noalias() = xm.lazyProduct(wm.middleRows(c, width).transpose());
          }
        } else {
          ym.noalias() = xm * wm.transpose();
        }
        if (bias != nullptr) {
          Eigen::Map<const Eigen::RowVectorXf> bm(bias + begin, cols);
          ym.rowwise() += bm;
        }
      },
      kColumnGrain);
}

}  // namespace servesim::SERVESIM_ISA_NS
