// DType: the numeric formats servesim sizes weights, activations and the KV cache in.
//
// Bytes per element are exact storage costs, including the scale overhead of grouped
// quantisation formats (int4 with one fp16 scale and one 4-bit zero point per group of
// kInt4GroupSize weights; MXFP4 with one 8-bit scale per 32 weights), because the memory
// planner must match what an engine really allocates. Stateless; thread-safe.
#pragma once

#include <string>
#include <string_view>

namespace servesim {

enum class DType { kFp32, kBf16, kFp16, kFp8, kInt8, kInt4, kMxfp4 };

inline constexpr int kInt4GroupSize = 128;  // weights per scale group (GPTQ/AWQ default)

// Storage bytes per element, scales included (e.g. int4: 0.5 + 2.5 / 128).
double dtype_bytes(DType dtype);

// Canonical lower-case name ("bf16", "fp8", "int4", ...).
std::string_view dtype_name(DType dtype);

// Parses a name as users write it: "bf16"/"bfloat16", "fp16"/"float16"/"half",
// "fp32"/"float32"/"float", "fp8"/"fp8_e4m3", "int8", "int4"/"awq"/"gptq", "mxfp4".
// Throws ConfigError naming `field` and the accepted names on anything else.
DType parse_dtype(std::string_view name, std::string_view field);

// True for formats an engine can store the KV cache in (bf16, fp16, fp32, fp8).
bool is_kv_cache_dtype(DType dtype);

}  // namespace servesim
