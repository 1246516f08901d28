#include "serve/loadtest/sse_decoder.h"

namespace servesim {

bool SseDecoder::feed(std::string_view bytes, std::vector<std::string>& events) {
  if (!error_.empty()) return false;
  size_t start = 0;
  for (size_t i = 0; i < bytes.size(); ++i) {
    const char c = bytes[i];
    if (c != '\n' && c != '\r') {
      after_cr_ = false;
      continue;
    }
    if (c == '\n' && after_cr_) {
      after_cr_ = false;
      start = i + 1;
      continue;
    }
    after_cr_ = c == '\r';
    line_.append(bytes.substr(start, i - start));
    on_line(line_, events);
    line_.clear();
    start = i + 1;
  }
  line_.append(bytes.substr(start));
  if (line_.size() > kMaxLineBytes) {
    error_ = "an event-stream line longer than " + std::to_string(kMaxLineBytes) + " bytes";
    return false;
  }
  return true;
}

void SseDecoder::on_line(std::string_view line, std::vector<std::string>& events) {
  if (line.empty()) {
    if (has_data_) events.push_back(std::move(data_));
    data_.clear();
    has_data_ = false;
    return;
  }
  if (line.front() == ':') return;
  const size_t colon = line.find(':');
  const std::string_view field = line.substr(0, colon);
  std::string_view value =
      colon == std::string_view::npos ? std::string_view() : line.substr(colon + 1);
  if (value.starts_with(" ")) value.remove_prefix(1);
  if (field != "data") return;
  if (has_data_) data_.push_back('\n');
  data_.append(value);
  has_data_ = true;
}

}  // namespace servesim
