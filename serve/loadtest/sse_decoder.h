// SseDecoder: an incremental decoder of a server-sent-events stream (the WHATWG "text/event-
// stream" format that OpenAI-compatible servers stream completions in). Bytes arrive in
// arbitrary pieces; each complete event's data (its `data:` lines joined with '\n') is handed
// out in order. Comment lines (":") and the event/id/retry fields are skipped; lines may end
// in "\n", "\r\n" or "\r".
//
// Bounded: a line longer than kMaxLineBytes is a malformed stream (error() says so) rather
// than unbounded buffering. Owns its partial-line buffer. Not thread-safe.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace servesim {

class SseDecoder {
 public:
  static constexpr size_t kMaxLineBytes = 4 << 20;

  // Decodes `bytes` and appends the data of every event they complete to `events`. Returns
  // false (and keeps returning false) once the stream is malformed.
  bool feed(std::string_view bytes, std::vector<std::string>& events);

  // True when the stream stopped in the middle of an event (data not yet dispatched).
  bool has_partial_event() const { return !line_.empty() || has_data_; }
  const std::string& error() const { return error_; }

 private:
  void on_line(std::string_view line, std::vector<std::string>& events);

  std::string line_;  // the current line, up to its end of line
  std::string data_;  // data lines of the current event, '\n'-joined
  bool has_data_ = false;
  bool after_cr_ = false;  // the previous byte was '\r' (a following '\n' ends nothing)
  std::string error_;
};

}  // namespace servesim
