#include "kernels/cpu_roofline.h"

#include <Eigen/Core>
#include <algorithm>
#include <chrono>
#include <vector>

#include "kernels/linear.h"
#include "kernels/sampler.h"

namespace servesim {
namespace {

using Clock = std::chrono::steady_clock;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

template <typename Fn>
double median_seconds(int repeats, Fn&& fn) {
  fn();  // warm-up: page faults, caches, thread wake-up
  std::vector<double> times;
  for (int r = 0; r < std::max(1, repeats); ++r) {
    const auto start = Clock::now();
    fn();
    times.push_back(std::chrono::duration<double>(Clock::now() - start).count());
  }
  return median(times);
}

}  // namespace

double measure_read_bandwidth_Bps(ThreadPool& pool, int64_t bytes, int repeats) {
  constexpr int64_t kGrain = 4096;  // floats; range starts are distinct multiples of it
  const int64_t n = bytes / static_cast<int64_t>(sizeof(float)) / kGrain * kGrain;
  std::vector<float> buffer(static_cast<size_t>(n), 1.0f);
  std::vector<float> partial(static_cast<size_t>(n / kGrain + 1), 0.0f);
  const double seconds = median_seconds(repeats, [&] {
    pool.parallel_for(
        n,
        [&](int64_t begin, int64_t end) {
          // Eigen's reduction is vectorised with several accumulators, so the loop waits on
          // memory, not on additions (a plain float loop may not be reordered into that).
          partial[static_cast<size_t>(begin / kGrain)] +=
              Eigen::Map<const Eigen::VectorXf>(buffer.data() + begin, end - begin).sum();
        },
        kGrain);
  });
  // The sums are kept so the reads cannot be optimised away.
  volatile float sink = partial[0];
  (void)sink;
  return static_cast<double>(n) * sizeof(float) / seconds;
}

double measure_gemm_flops(ThreadPool& pool, int64_t m, int64_t n, int64_t k, int repeats) {
  SamplingRng rng(1);
  std::vector<float> x(static_cast<size_t>(m * k)), w(static_cast<size_t>(n * k)),
      y(static_cast<size_t>(m * n));
  for (float& v : x) v = rng.uniform() - 0.5f;
  for (float& v : w) v = rng.uniform() - 0.5f;
  const double seconds = median_seconds(
      repeats, [&] { linear(x.data(), w.data(), nullptr, y.data(), m, n, k, pool); });
  return 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k) / seconds;
}

}  // namespace servesim
