// ByteWriter / ByteReader: values in and out of a byte string, for the results that the
// processes sharing a job (sim/work_share.h) send each other. Values are copied as their
// in-memory bytes, so writer and reader must be the same build on the same architecture —
// true of `mpirun -np N servesim ...`, which starts one binary N times. Not a file format.
// Invariant: a reader reads exactly the sequence of types its writer wrote.
// Thread-safety: none; one writer or reader per thread.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>

namespace servesim {

class ByteWriter {
 public:
  template <typename T>
  void put(const T& value) {
    static_assert(std::is_trivially_copyable_v<T>, "put() copies bytes; use put_string()");
    bytes_.append(reinterpret_cast<const char*>(&value), sizeof value);
  }
  void put_string(const std::string& s);

  const std::string& bytes() const { return bytes_; }

 private:
  std::string bytes_;
};

class ByteReader {
 public:
  // `bytes` must outlive the reader.
  explicit ByteReader(const std::string& bytes) : bytes_(bytes) {}

  // Throws std::runtime_error when fewer bytes are left than T holds (a writer/reader
  // mismatch, a bug).
  template <typename T>
  T get() {
    static_assert(std::is_trivially_copyable_v<T>, "get() copies bytes; use get_string()");
    T value;
    std::memcpy(&value, take(sizeof value), sizeof value);
    return value;
  }
  std::string get_string();

  bool at_end() const { return offset_ == bytes_.size(); }

 private:
  const char* take(size_t n);

  const std::string& bytes_;
  size_t offset_ = 0;
};

}  // namespace servesim
