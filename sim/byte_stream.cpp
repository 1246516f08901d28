#include "sim/byte_stream.h"

#include <stdexcept>

namespace servesim {

void ByteWriter::put_string(const std::string& s) {
  put<uint64_t>(s.size());
  bytes_ += s;
}

std::string ByteReader::get_string() {
  const auto size = get<uint64_t>();
  return std::string(take(size), size);
}

const char* ByteReader::take(size_t n) {
  if (n > bytes_.size() - offset_) {
    throw std::runtime_error("ByteReader: read past the end (writer and reader disagree)");
  }
  const char* at = bytes_.data() + offset_;
  offset_ += n;
  return at;
}

}  // namespace servesim
