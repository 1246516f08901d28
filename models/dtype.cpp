#include "models/dtype.h"

#include "models/config_error.h"
#include "models/name_match.h"

namespace servesim {

double dtype_bytes(DType dtype) {
  switch (dtype) {
    case DType::kFp32:
      return 4.0;
    case DType::kBf16:
    case DType::kFp16:
      return 2.0;
    case DType::kFp8:
    case DType::kInt8:
      return 1.0;
    case DType::kInt4:
      // Packed nibbles plus, per group, an fp16 scale (2 B) and a packed 4-bit zero (0.5 B).
      return 0.5 + 2.5 / kInt4GroupSize;
    case DType::kMxfp4:
      // OCP MX: 4-bit elements with one shared 8-bit exponent per 32 elements.
      return 0.5 + 1.0 / 32.0;
  }
  return 2.0;
}

std::string_view dtype_name(DType dtype) {
  switch (dtype) {
    case DType::kFp32:
      return "fp32";
    case DType::kBf16:
      return "bf16";
    case DType::kFp16:
      return "fp16";
    case DType::kFp8:
      return "fp8";
    case DType::kInt8:
      return "int8";
    case DType::kInt4:
      return "int4";
    case DType::kMxfp4:
      return "mxfp4";
  }
  return "bf16";
}

DType parse_dtype(std::string_view name, std::string_view field) {
  const std::string lower = servesim::lower(name);
  if (lower == "fp32" || lower == "float32" || lower == "float") return DType::kFp32;
  if (lower == "bf16" || lower == "bfloat16") return DType::kBf16;
  if (lower == "fp16" || lower == "float16" || lower == "half") return DType::kFp16;
  if (lower == "fp8" || lower == "fp8_e4m3" || lower == "float8_e4m3fn") return DType::kFp8;
  if (lower == "int8" || lower == "w8a8") return DType::kInt8;
  if (lower == "int4" || lower == "awq" || lower == "gptq") return DType::kInt4;
  if (lower == "mxfp4") return DType::kMxfp4;
  throw ConfigError(std::string(field) + ": unknown dtype '" + std::string(name) +
                    "'; use one of fp32, bf16, fp16, fp8, int8, int4, mxfp4");
}

bool is_kv_cache_dtype(DType dtype) {
  return dtype == DType::kBf16 || dtype == DType::kFp16 || dtype == DType::kFp32 ||
         dtype == DType::kFp8;
}

}  // namespace servesim
