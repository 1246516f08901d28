#include "plan/byte_stream.h"

#include <stdexcept>

namespace servesim {

const char* ByteReader::take(size_t n) {
  if (n > bytes_.size() - offset_) {
    throw std::runtime_error("ByteReader: read past the end (writer and reader disagree)");
  }
  const char* at = bytes_.data() + offset_;
  offset_ += n;
  return at;
}

}  // namespace servesim
