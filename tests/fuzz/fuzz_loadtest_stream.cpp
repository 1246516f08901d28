// libFuzzer target: what `servesim loadtest` reads back from the server under test — a
// streamed completion, split into events by SseDecoder and each event read by
// parse_stream_chunk. Input layout: the first byte picks the endpoint (bit 0: completions or
// chat completions) and the size of the reads the stream arrives in (bits 1-7: 1 to 128
// bytes); the rest is the response body. The server is not trusted, so nothing may escape
// (neither reader throws), and what they say must hold together: the events and whether the
// stream is malformed do not depend on how the bytes were split into reads, a malformed
// stream stays malformed, and each chunk is one thing — the end marker, an error with its
// message, or data whose usage counts are token counts (0 or more).
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "serve/loadtest/sse_decoder.h"
#include "serve/loadtest/stream_chunk.h"

namespace {

struct Decoded {
  std::vector<std::string> events;
  bool ok = true;
  bool partial = false;
};

Decoded decode(std::string_view body, size_t read_bytes) {
  Decoded out;
  servesim::SseDecoder decoder;
  for (size_t at = 0; at < body.size(); at += read_bytes) {
    const bool ok = decoder.feed(body.substr(at, read_bytes), out.events);
    // Once malformed, always malformed, with the reason.
    if (!out.ok && ok) std::abort();
    if (!ok && decoder.error().empty()) std::abort();
    out.ok = ok;
  }
  out.partial = decoder.has_partial_event();
  return out;
}

void check_chunk(const servesim::StreamChunk& c) {
  if (c.done && (c.has_token || !c.error.empty() || c.prompt_tokens || c.completion_tokens))
    std::abort();
  if (c.server_error && c.error.empty()) std::abort();
  if (!c.error.empty() && (c.has_token || c.prompt_tokens || c.completion_tokens)) std::abort();
  if ((c.prompt_tokens && *c.prompt_tokens < 0) ||
      (c.completion_tokens && *c.completion_tokens < 0))
    std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const servesim::ApiKind api =
      (data[0] & 1) ? servesim::ApiKind::kChat : servesim::ApiKind::kCompletions;
  const size_t read_bytes = 1 + (data[0] >> 1);
  const std::string_view body(reinterpret_cast<const char*>(data) + 1, size - 1);
  const Decoded in_reads = decode(body, read_bytes);
  const Decoded whole = decode(body, body.size() + 1);
  if (in_reads.ok != whole.ok || in_reads.partial != whole.partial ||
      (whole.ok && in_reads.events != whole.events)) {
    std::abort();
  }
  for (const std::string& event : whole.events)
    check_chunk(servesim::parse_stream_chunk(event, api));
  return 0;
}
