#include <algorithm>
#include <vector>

#include "kernels/cuda/cublas_linear.h"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/cuda_roofline.h"
#include "kernels/cuda/device_buffer.h"
#include "kernels/cuda/random_fill.h"

namespace servesim::cuda {
namespace {

// Owns a stream and a pair of events; times enqueued work in seconds.
class EventTimer {
 public:
  EventTimer() {
    check_cuda(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate");
    check_cuda(cudaEventCreate(&start_), "cudaEventCreate");
    check_cuda(cudaEventCreate(&stop_), "cudaEventCreate");
  }
  ~EventTimer() {
    cudaEventDestroy(start_);
    cudaEventDestroy(stop_);
    cudaStreamDestroy(stream_);
  }
  EventTimer(const EventTimer&) = delete;
  EventTimer& operator=(const EventTimer&) = delete;

  cudaStream_t stream() const { return stream_; }

  // Median seconds of `repeats` runs of fn(), after one untimed warm-up.
  template <typename Fn>
  double median_seconds(int repeats, Fn&& fn) {
    fn();
    std::vector<double> times;
    for (int r = 0; r < std::max(1, repeats); ++r) {
      check_cuda(cudaEventRecord(start_, stream_), "cudaEventRecord");
      fn();
      check_cuda(cudaEventRecord(stop_, stream_), "cudaEventRecord");
      check_cuda(cudaEventSynchronize(stop_), "cudaEventSynchronize");
      float ms = 0;
      check_cuda(cudaEventElapsedTime(&ms, start_, stop_), "cudaEventElapsedTime");
      times.push_back(ms * 1e-3);
    }
    std::sort(times.begin(), times.end());
    return times.size() % 2 ? times[times.size() / 2]
                            : 0.5 * (times[times.size() / 2 - 1] + times[times.size() / 2]);
  }

 private:
  cudaStream_t stream_ = nullptr;
  cudaEvent_t start_ = nullptr;
  cudaEvent_t stop_ = nullptr;
};

// Each thread sums 16-byte words with a grid stride and writes one partial, so the kernel is
// bound by loads, not arithmetic; the partials keep the loads from being optimised away.
__global__ void read_kernel(const uint4* data, int64_t n, uint32_t* partial) {
  uint32_t sum = 0;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x) {
    const uint4 w = __ldg(data + i);
    sum ^= w.x ^ w.y ^ w.z ^ w.w;
  }
  partial[blockIdx.x * blockDim.x + threadIdx.x] = sum;
}

}  // namespace

double measure_hbm_read_bandwidth_Bps(int64_t bytes, int repeats) {
  EventTimer timer;
  const int64_t words = bytes / 16;
  DeviceBuffer buffer(words * 16);
  check_cuda(
      cudaMemsetAsync(buffer.data<void>(), 1, static_cast<size_t>(words * 16), timer.stream()),
      "cudaMemsetAsync");
  int device = 0, sms = 0;
  check_cuda(cudaGetDevice(&device), "cudaGetDevice");
  check_cuda(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device),
             "cudaDeviceGetAttribute");
  constexpr int kThreads = 512;
  const int blocks = sms * 4;  // a few resident blocks per SM keep enough loads in flight
  DeviceBuffer partial(static_cast<int64_t>(blocks) * kThreads * 4);
  const double seconds = timer.median_seconds(repeats, [&] {
    read_kernel<<<blocks, kThreads, 0, timer.stream()>>>(buffer.data<uint4>(), words,
                                                         partial.data<uint32_t>());
    check_launch("read_kernel");
  });
  return static_cast<double>(words) * 16.0 / seconds;
}

double measure_cublas_gemm_flops(int64_t m, int64_t n, int64_t k, int repeats) {
  EventTimer timer;
  DeviceBuffer x(m * k * 2), w(n * k * 2), y(m * n * 2);
  fill_uniform_bf16(x.data<Bf16>(), m * k, 1, 0, 1.0f, timer.stream());
  fill_uniform_bf16(w.data<Bf16>(), n * k, 1, 1, 1.0f, timer.stream());
  CublasLinear linear(timer.stream());
  const double seconds = timer.median_seconds(
      repeats, [&] { linear.forward(x.data<Bf16>(), w.data<Bf16>(), y.data<Bf16>(), m, n, k); });
  return 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k) / seconds;
}

}  // namespace servesim::cuda
