// RowScale: how a GEMM's measured time departs from its linear cost model as a function of
// the rows (tokens) it multiplies — the factor measured / linear at each profiled row count,
// interpolated between them. GEMM kernels are not linear in their rows: a blocked GEMM packs
// its weights once per call and tiles rows in panels (CPU), cuBLAS quantises rows into tiles
// and waves (GPU); the linear FLOP and byte features cannot bend with that, the table does.
// The features stay physical, so a profile still transfers to other models; the factors
// carry the kernel's row-efficiency curve, which depends on the device and kernel, not on
// the model.
//
// Interpolation is linear in log(rows) between points and flat beyond the first and last.
// An empty RowScale is the identity (factor 1 everywhere).
//
// Plain value; immutable after construction; thread-safe. at() is O(log points), allocates
// nothing.
#pragma once

#include <string>
#include <vector>

namespace servesim {

struct RowFactor {
  double rows = 0;    // rows of the GEMM (tokens of the step, or sampled sequences). > 0
  double factor = 1;  // measured time / linear model's time. > 0
};

class RowScale {
 public:
  RowScale() = default;
  // Throws ConfigError unless rows strictly increase and every rows and factor is finite
  // and > 0; `context` starts the message (e.g. "profile.json: row_scale.mlp").
  RowScale(std::vector<RowFactor> points, const std::string& context);

  double at(double rows) const;
  bool empty() const { return points_.empty(); }
  const std::vector<RowFactor>& points() const { return points_; }

 private:
  std::vector<RowFactor> points_;
};

}  // namespace servesim
