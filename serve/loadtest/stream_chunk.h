// StreamChunk: what one server-sent event of a streamed OpenAI-compatible completion says —
// whether it carries generated text (one chunk per token, as vLLM streams by default), the
// usage block (`stream_options.include_usage`), the end marker "[DONE]", or an error. Shapes
// per vLLM 0.6-0.10's entrypoints/openai/protocol.py: /v1/completions chunks carry
// choices[].text, /v1/chat/completions chunks choices[].delta.content (the first, role-only
// delta is not a token). Stateless; thread-safe.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace servesim {

enum class ApiKind { kCompletions, kChat };

// "/v1/completions" or "/v1/chat/completions"; throws ConfigError naming --endpoint otherwise.
ApiKind parse_api_kind(const std::string& path);
const char* api_path(ApiKind api);

struct StreamChunk {
  bool done = false;       // the "[DONE]" sentinel
  bool has_token = false;  // carries generated output
  // Tokens, from usage: unset unless the server sent an integer in [0, INT_MAX].
  std::optional<int> prompt_tokens;
  std::optional<int> completion_tokens;
  std::string error;          // non-empty: not JSON, not an object, or the server's {"error": ...}
  bool server_error = false;  // error came from the server's error object (not malformed)
};

StreamChunk parse_stream_chunk(std::string_view data, ApiKind api);

}  // namespace servesim
