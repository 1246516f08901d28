// ByteWriter / ByteReader: values in and out of a byte string, for the results that the
// processes sharing a job (plan/work_share.h) send each other. A value is a trivially
// copyable type (copied as its in-memory bytes), a std::string, or a std::vector of values;
// so writer and reader must be the same build on the same architecture — true of
// `mpirun -np N servesim ...`, which starts one binary N times. Not a file format.
// Invariant: a reader reads exactly the sequence of types its writer wrote.
// Thread-safety: none; one writer or reader per thread.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

namespace servesim {

class ByteWriter {
 public:
  void write(const std::string& s) {
    write<uint64_t>(s.size());
    bytes_ += s;
  }
  template <typename T>
  void write(const std::vector<T>& v) {
    write<uint64_t>(v.size());
    for (const T& x : v) write(x);
  }
  template <typename T>
  void write(const T& value) {
    static_assert(std::is_trivially_copyable_v<T>, "write() copies bytes of plain values only");
    bytes_.append(reinterpret_cast<const char*>(&value), sizeof value);
  }

  const std::string& bytes() const { return bytes_; }

 private:
  std::string bytes_;
};

class ByteReader {
 public:
  // `bytes` must outlive the reader.
  explicit ByteReader(const std::string& bytes) : bytes_(bytes) {}

  // Each read throws std::runtime_error when fewer bytes are left than the value needs (a
  // writer/reader mismatch, a bug).
  void read(std::string& s) {
    const auto size = get<uint64_t>();
    s.assign(take(size), size);
  }
  template <typename T>
  void read(std::vector<T>& v) {
    v.resize(get<uint64_t>());
    for (T& x : v) read(x);
  }
  template <typename T>
  void read(T& value) {
    static_assert(std::is_trivially_copyable_v<T>, "read() copies bytes of plain values only");
    std::memcpy(&value, take(sizeof value), sizeof value);
  }
  template <typename T>
  T get() {
    T value;
    read(value);
    return value;
  }

  bool at_end() const { return offset_ == bytes_.size(); }

 private:
  const char* take(size_t n);

  const std::string& bytes_;
  size_t offset_ = 0;
};

}  // namespace servesim
