// IsaKernels: the per-instruction-set copies of the hot CPU kernels and the table dispatch
// picks from. kernels/isa/*.cpp are compiled once per level with SERVESIM_ISA_NS naming the
// namespace (isa_x86_64, isa_x86_64_v3, isa_x86_64_v4; or isa_native alone with
// SERVESIM_NATIVE_CPU_KERNELS); linear() and paged_attention() call active_isa_kernels()'s. Each
// copy is partially linked and has every symbol but its namespace's made local
// (cmake/Servesim.cmake, servesim_add_isa_kernels), so the Eigen and standard-library code
// inlined into an AVX-512 copy can never be merged into, and run from, a baseline one.
//
// Same contracts as kernels/linear.h and kernels/paged_attention.h. The table is immutable;
// thread-safe.
#pragma once

#include <cstdint>
#include <span>

#include "kernels/cpu_isa.h"
#include "kernels/paged_attention.h"
#include "kernels/paged_kv_cache.h"
#include "kernels/thread_pool.h"

#define SERVESIM_DECLARE_ISA_KERNELS(ns)                                                           \
  namespace servesim::ns {                                                                         \
  void linear(const float* x, const float* w, const float* bias, float* y, int64_t m, int64_t n,   \
              int64_t k, ThreadPool& pool);                                                        \
  void paged_attention(const float* q, int64_t q_row_stride, const PagedKVCache& cache, int layer, \
                       std::span<const AttentionSequence> sequences, int num_heads, float scale,   \
                       float* out, ThreadPool& pool);                                              \
  }

SERVESIM_DECLARE_ISA_KERNELS(isa_x86_64)
SERVESIM_DECLARE_ISA_KERNELS(isa_x86_64_v3)
SERVESIM_DECLARE_ISA_KERNELS(isa_x86_64_v4)
SERVESIM_DECLARE_ISA_KERNELS(isa_native)

namespace servesim {

using LinearKernel = void(const float* x, const float* w, const float* bias, float* y, int64_t m,
                          int64_t n, int64_t k, ThreadPool& pool);
using PagedAttentionKernel = void(const float* q, int64_t q_row_stride, const PagedKVCache& cache,
                                  int layer, std::span<const AttentionSequence> sequences,
                                  int num_heads, float scale, float* out, ThreadPool& pool);

struct IsaKernels {
  CpuIsa isa;
  LinearKernel* linear;
  PagedAttentionKernel* paged_attention;
};

// The copies this binary carries, lowest level first.
std::span<const IsaKernels> built_isa_kernels();

// The copy for active_cpu_isa(). THROWS as active_cpu_isa() does.
const IsaKernels& active_isa_kernels();

}  // namespace servesim
