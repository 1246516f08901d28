// Types the CUDA kernels' public headers share with code compiled by the host compiler alone:
// a stream handle and bfloat16 storage, declared without any CUDA header so that runtime and
// test sources built by g++ can call the kernels. Plain types; no ownership.
#pragma once

#include <cstdint>

// The CUDA runtime's cudaStream_t is `CUstream_st*`; declaring the struct keeps the handle
// type-checked without pulling in cuda_runtime.h.
struct CUstream_st;

namespace servesim::cuda {

using Stream = CUstream_st*;  // nullptr: the legacy default stream

// One bfloat16 value as stored in device memory: layout-compatible with CUDA's
// __nv_bfloat16 (the .cu files reinterpret pointers to it).
struct Bf16 {
  uint16_t bits;
};

}  // namespace servesim::cuda
