// SafetensorsFile: a read-only, memory-mapped .safetensors checkpoint file (Hugging Face's
// format: an 8-byte little-endian header length, a JSON header naming each tensor's dtype,
// shape and byte range, then the raw data). Tensors are read out as fp32 whatever their
// stored dtype (F32, F16, BF16).
//
// Ownership: owns the mapping, released in the destructor; move-only. Thread-safety: const
// methods may run concurrently. Invariants after open: every listed tensor has a supported
// dtype and its byte range lies inside the file and matches its shape.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace servesim {

enum class SafetensorsDType { kF32, kF16, kBF16 };

struct SafetensorsTensor {
  SafetensorsDType dtype = SafetensorsDType::kF32;
  std::vector<int64_t> shape;
  int64_t offset_bytes = 0;  // from the start of the file
  int64_t size_bytes = 0;
};

class SafetensorsFile {
 public:
  // Maps and validates the file. Throws ConfigError (one line naming the file and the
  // problem) when it cannot be opened, is truncated, or its header is malformed.
  explicit SafetensorsFile(const std::string& path);
  ~SafetensorsFile();
  SafetensorsFile(SafetensorsFile&& other) noexcept;
  SafetensorsFile& operator=(SafetensorsFile&&) = delete;
  SafetensorsFile(const SafetensorsFile&) = delete;
  SafetensorsFile& operator=(const SafetensorsFile&) = delete;

  const std::string& path() const { return path_; }
  const std::map<std::string, SafetensorsTensor>& tensors() const { return tensors_; }
  bool contains(const std::string& name) const { return tensors_.count(name) != 0; }

  // The tensor converted to fp32, row-major. REQUIRES: contains(name).
  std::vector<float> read_fp32(const std::string& name) const;

 private:
  std::string path_;
  const uint8_t* data_ = nullptr;  // the whole file, mapped
  int64_t size_bytes_ = 0;
  std::map<std::string, SafetensorsTensor> tensors_;
};

// IEEE half and bfloat16 bit patterns to float (exact: every such value is a float).
float fp16_to_float(uint16_t bits);
float bf16_to_float(uint16_t bits);

}  // namespace servesim
