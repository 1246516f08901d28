#include "models/dtype.h"

#include <gtest/gtest.h>

#include "models/config_error.h"

namespace servesim {
namespace {

TEST(DType, BytesIncludeQuantisationScales) {
  EXPECT_DOUBLE_EQ(dtype_bytes(DType::kFp32), 4.0);
  EXPECT_DOUBLE_EQ(dtype_bytes(DType::kBf16), 2.0);
  EXPECT_DOUBLE_EQ(dtype_bytes(DType::kFp16), 2.0);
  EXPECT_DOUBLE_EQ(dtype_bytes(DType::kFp8), 1.0);
  EXPECT_DOUBLE_EQ(dtype_bytes(DType::kInt8), 1.0);
  // 128 int4 weights: 64 B of nibbles + 2 B fp16 scale + 0.5 B packed zero point.
  EXPECT_DOUBLE_EQ(dtype_bytes(DType::kInt4) * 128, 66.5);
  // 32 MXFP4 weights: 16 B of nibbles + one shared 8-bit exponent.
  EXPECT_DOUBLE_EQ(dtype_bytes(DType::kMxfp4) * 32, 17.0);
}

TEST(DType, ParsesTheNamesUsersWrite) {
  EXPECT_EQ(parse_dtype("bfloat16", "--dtype"), DType::kBf16);
  EXPECT_EQ(parse_dtype("BF16", "--dtype"), DType::kBf16);
  EXPECT_EQ(parse_dtype("half", "--dtype"), DType::kFp16);
  EXPECT_EQ(parse_dtype("fp8_e4m3", "--dtype"), DType::kFp8);
  EXPECT_EQ(parse_dtype("awq", "--dtype"), DType::kInt4);
  EXPECT_EQ(parse_dtype("float32", "--dtype"), DType::kFp32);
  EXPECT_EQ(dtype_name(parse_dtype("gptq", "x")), "int4");
}

TEST(DType, UnknownNameNamesTheField) {
  try {
    parse_dtype("fp7", "--kv-cache-dtype");
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("--kv-cache-dtype"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("fp7"), std::string::npos);
  }
}

}  // namespace
}  // namespace servesim
