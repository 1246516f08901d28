#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>

#include "kernels/embedding.h"
#include "kernels/rms_norm.h"
#include "kernels/rope.h"
#include "kernels/silu_mul.h"
#include "tests/kernels/kernel_test_util.h"

namespace servesim {
namespace {

using testing::max_relative_error;
using testing::random_vector;

TEST(RmsNorm, MatchesDoubleReference) {
  const int rows = 5, dim = 96;
  const std::vector<float> x = random_vector(rows * dim, 1, 3.0f);
  const std::vector<float> w = random_vector(dim, 2);
  std::vector<float> y(x.size());
  rms_norm(x.data(), w.data(), y.data(), rows, dim, 1e-5f);
  std::vector<double> ref(x.size());
  for (int r = 0; r < rows; ++r) {
    double ss = 0;
    for (int i = 0; i < dim; ++i) ss += double(x[r * dim + i]) * x[r * dim + i];
    const double s = 1.0 / std::sqrt(ss / dim + 1e-5);
    for (int i = 0; i < dim; ++i) ref[r * dim + i] = x[r * dim + i] * s * w[i];
  }
  EXPECT_LT(max_relative_error(y, ref), 1e-6);
  // In place gives the same.
  std::vector<float> inplace = x;
  rms_norm(inplace.data(), w.data(), inplace.data(), rows, dim, 1e-5f);
  EXPECT_EQ(inplace, y);
}

TEST(Rope, RotatesPairsHalfADimensionApart) {
  const int head_dim = 8, heads = 2;
  RopeTable table(head_dim, 64, 10000.0);
  std::vector<float> x = random_vector(3 * heads * head_dim, 3);
  const std::vector<float> before = x;
  const int32_t positions[] = {0, 1, 37};
  table.apply(x.data(), 3, heads * head_dim, heads, positions);
  // Position 0 is the identity.
  for (int i = 0; i < heads * head_dim; ++i) EXPECT_EQ(x[i], before[i]);
  std::vector<double> ref(x.size());
  for (int t = 0; t < 3; ++t) {
    for (int h = 0; h < heads; ++h) {
      for (int i = 0; i < head_dim / 2; ++i) {
        const size_t a = size_t(t * heads * head_dim + h * head_dim + i);
        const size_t b = a + head_dim / 2;
        const double angle = positions[t] * std::pow(10000.0, -2.0 * i / head_dim);
        ref[a] = before[a] * std::cos(angle) - before[b] * std::sin(angle);
        ref[b] = before[b] * std::cos(angle) + before[a] * std::sin(angle);
      }
    }
  }
  EXPECT_LT(max_relative_error(x, ref), 1e-6);
}

TEST(Rope, RejectsOddHeadDim) {
  EXPECT_THROW(RopeTable(7, 16, 10000.0), std::invalid_argument);
}

TEST(SiluMul, MatchesFormula) {
  const std::vector<float> g = random_vector(100, 4, 6.0f);
  const std::vector<float> u = random_vector(100, 5);
  std::vector<float> out(100);
  silu_mul(g.data(), u.data(), out.data(), 100);
  std::vector<double> ref(100);
  for (int i = 0; i < 100; ++i) ref[i] = g[i] / (1.0 + std::exp(-double(g[i]))) * u[i];
  EXPECT_LT(max_relative_error(out, ref), 1e-6);
}

TEST(Embedding, CopiesRowsAndRejectsIdsOutsideTheVocabulary) {
  const std::vector<float> table = random_vector(10 * 4, 6);
  const int32_t ids[] = {3, 0, 9};
  std::vector<float> out(12);
  embedding(table.data(), 10, 4, ids, 3, out.data());
  for (int t = 0; t < 3; ++t) {
    for (int i = 0; i < 4; ++i) EXPECT_EQ(out[t * 4 + i], table[ids[t] * 4 + i]);
  }
  const int32_t bad[] = {10};
  EXPECT_THROW(embedding(table.data(), 10, 4, bad, 1, out.data()), std::out_of_range);
}

}  // namespace
}  // namespace servesim
