#include "engine/runtime/safetensors_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bit>
#include <cstring>
#include <nlohmann/json.hpp>

#include "models/config_error.h"

namespace servesim {
namespace {

// A header longer than this is not a checkpoint header (real ones are well under 1 MiB).
constexpr uint64_t kMaxHeaderBytes = 100ull << 20;

int64_t element_bytes(SafetensorsDType dtype) {
  return dtype == SafetensorsDType::kF32 ? 4 : 2;
}

// Header integers (dimensions, offsets) above this are refused: 2^50 elements or bytes is far
// beyond any checkpoint, and keeps their products and sums within int64.
constexpr int64_t kMaxHeaderInt = int64_t{1} << 50;

// A header integer: a JSON integer in [0, kMaxHeaderInt]. A float (1e308) or a huge integer
// would not convert to int64 (undefined behaviour), so they are refused by type and range.
int64_t header_int(const nlohmann::json& v, const std::string& where, const char* what) {
  if (!v.is_number_integer()) {
    throw ConfigError(where + " has a " + what + " that is not an integer");
  }
  if (v.is_number_unsigned() ? v.get<uint64_t>() > static_cast<uint64_t>(kMaxHeaderInt)
                             : v.get<int64_t>() > kMaxHeaderInt) {
    throw ConfigError(where + " has a " + what + " beyond 2^50");
  }
  if (!v.is_number_unsigned() && v.get<int64_t>() < 0) {
    throw ConfigError(where + " has a negative " + what);
  }
  return v.get<int64_t>();
}

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

}  // namespace

float bf16_to_float(uint16_t bits) {
  return std::bit_cast<float>(static_cast<uint32_t>(bits) << 16);
}

float fp16_to_float(uint16_t bits) {
  const uint32_t sign = static_cast<uint32_t>(bits & 0x8000u) << 16;
  const uint32_t exponent = (bits >> 10) & 0x1fu;
  uint32_t mantissa = bits & 0x3ffu;
  uint32_t out;
  if (exponent == 0x1f) {
    out = sign | 0x7f800000u | (mantissa << 13);  // inf, nan
  } else if (exponent != 0) {
    out = sign | ((exponent + 112) << 23) | (mantissa << 13);  // rebias 15 -> 127
  } else if (mantissa == 0) {
    out = sign;  // +-0
  } else {
    // Subnormal half: normalise into a float.
    int e = -1;
    do {
      ++e;
      mantissa <<= 1;
    } while ((mantissa & 0x400u) == 0);
    out = sign | static_cast<uint32_t>(112 - e) << 23 | ((mantissa & 0x3ffu) << 13);
  }
  return std::bit_cast<float>(out);
}

SafetensorsFile::SafetensorsFile(const std::string& path) : path_(path) {
  const int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0) throw ConfigError(path + ": cannot open safetensors file: " + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    ::close(fd);
    throw ConfigError(path + ": cannot stat safetensors file");
  }
  size_bytes_ = st.st_size;
  if (size_bytes_ > 0) {
    void* map = ::mmap(nullptr, static_cast<size_t>(size_bytes_), PROT_READ, MAP_PRIVATE, fd, 0);
    ::close(fd);
    if (map == MAP_FAILED) throw ConfigError(path + ": cannot mmap safetensors file");
    data_ = static_cast<const uint8_t*>(map);
  } else {
    ::close(fd);
  }
  try {
    if (size_bytes_ < 8) {
      throw ConfigError(path + ": truncated safetensors file (" + std::to_string(size_bytes_) +
                        " bytes; the header length alone takes 8)");
    }
    uint64_t header_bytes = 0;
    std::memcpy(&header_bytes, data_, 8);  // little-endian, as on every host servesim targets
    if (header_bytes > kMaxHeaderBytes || header_bytes > static_cast<uint64_t>(size_bytes_ - 8)) {
      throw ConfigError(path + ": truncated safetensors file (header claims " +
                        std::to_string(header_bytes) + " bytes, " +
                        std::to_string(size_bytes_ - 8) + " follow)");
    }
    const int64_t data_start = 8 + static_cast<int64_t>(header_bytes);
    const int64_t data_bytes = size_bytes_ - data_start;
    nlohmann::json header;
    try {
      header = nlohmann::json::parse(data_ + 8, data_ + data_start);
    } catch (const nlohmann::json::exception& e) {
      throw ConfigError(path + ": safetensors header is not valid JSON (" + e.what() + ")");
    }
    if (!header.is_object()) throw ConfigError(path + ": safetensors header is not a JSON object");
    for (const auto& [name, entry] : header.items()) {
      if (name == "__metadata__") continue;
      const std::string where = path + ": tensor '" + name + "'";
      if (!entry.is_object() || !entry.contains("dtype") || !entry.contains("shape") ||
          !entry.contains("data_offsets")) {
        throw ConfigError(where + " lacks dtype, shape or data_offsets in the header");
      }
      SafetensorsTensor t;
      const std::string dtype = entry["dtype"].is_string() ? entry["dtype"].get<std::string>() : "";
      if (dtype == "F32") {
        t.dtype = SafetensorsDType::kF32;
      } else if (dtype == "F16") {
        t.dtype = SafetensorsDType::kF16;
      } else if (dtype == "BF16") {
        t.dtype = SafetensorsDType::kBF16;
      } else {
        throw ConfigError(where + " has dtype '" + dtype +
                          "'; the engine reads F32, F16 and BF16 checkpoints");
      }
      int64_t numel = 1;
      try {
        if (!entry["shape"].is_array()) throw ConfigError(where + " has a malformed shape");
        for (const auto& d : entry["shape"]) {
          const int64_t dim = header_int(d, where, "dimension");
          if (dim > 0 && numel > kMaxHeaderInt / dim) {
            throw ConfigError(where + " has a shape of more than 2^50 elements");
          }
          numel *= dim;
          t.shape.push_back(dim);
        }
        const nlohmann::json& offsets_json = entry["data_offsets"];
        if (!offsets_json.is_array() || offsets_json.size() != 2) {
          throw ConfigError(where + " has malformed data_offsets");
        }
        const int64_t offsets[2] = {header_int(offsets_json[0], where, "data offset"),
                                    header_int(offsets_json[1], where, "data offset")};
        if (offsets[1] < offsets[0]) throw ConfigError(where + " has malformed data_offsets");
        t.offset_bytes = data_start + offsets[0];
        t.size_bytes = offsets[1] - offsets[0];
        if (offsets[1] > data_bytes) {
          throw ConfigError(path + ": truncated safetensors file (tensor '" + name +
                            "' ends at byte " + std::to_string(offsets[1]) +
                            " of the data, which holds " + std::to_string(data_bytes) + ")");
        }
      } catch (const nlohmann::json::exception&) {
        throw ConfigError(where + " has a malformed shape or data_offsets");
      }
      if (t.size_bytes != numel * element_bytes(t.dtype)) {
        throw ConfigError(where + " holds " + std::to_string(t.size_bytes) + " bytes but shape " +
                          shape_text(t.shape) + " of " + dtype + " needs " +
                          std::to_string(numel * element_bytes(t.dtype)));
      }
      tensors_.emplace(name, std::move(t));
    }
  } catch (...) {
    if (data_ != nullptr) ::munmap(const_cast<uint8_t*>(data_), static_cast<size_t>(size_bytes_));
    throw;
  }
}

SafetensorsFile::SafetensorsFile(SafetensorsFile&& other) noexcept
    : path_(std::move(other.path_)),
      data_(other.data_),
      size_bytes_(other.size_bytes_),
      tensors_(std::move(other.tensors_)) {
  other.data_ = nullptr;
  other.size_bytes_ = 0;
}

SafetensorsFile::~SafetensorsFile() {
  if (data_ != nullptr) ::munmap(const_cast<uint8_t*>(data_), static_cast<size_t>(size_bytes_));
}

std::vector<float> SafetensorsFile::read_fp32(const std::string& name) const {
  const SafetensorsTensor& t = tensors_.at(name);
  const uint8_t* src = data_ + t.offset_bytes;
  const int64_t n = t.size_bytes / element_bytes(t.dtype);
  std::vector<float> out(static_cast<size_t>(n));
  if (n == 0) return out;  // an empty tensor's vector has no buffer to memcpy into
  if (t.dtype == SafetensorsDType::kF32) {
    std::memcpy(out.data(), src, static_cast<size_t>(t.size_bytes));
    return out;
  }
  for (int64_t i = 0; i < n; ++i) {
    uint16_t bits;
    std::memcpy(&bits, src + 2 * i, 2);  // unaligned-safe
    out[static_cast<size_t>(i)] =
        t.dtype == SafetensorsDType::kBF16 ? bf16_to_float(bits) : fp16_to_float(bits);
  }
  return out;
}

}  // namespace servesim
