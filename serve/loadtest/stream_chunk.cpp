#include "serve/loadtest/stream_chunk.h"

#include <nlohmann/json.hpp>

#include "models/config_error.h"
#include "models/json_object_reader.h"

namespace servesim {
namespace {

bool choice_has_token(const nlohmann::json& choice, ApiKind api) {
  if (!choice.is_object()) return false;
  if (api == ApiKind::kCompletions) return choice.contains("text");
  const auto delta = choice.find("delta");
  if (delta == choice.end() || !delta->is_object()) return false;
  const auto content = delta->find("content");
  if (content == delta->end() || !content->is_string()) return false;
  return !content->get_ref<const std::string&>().empty() || !delta->contains("role");
}

// A count a broken server cannot turn into nonsense: an integer from 0 to INT_MAX, else none
// (the load test then counts the streamed chunks instead of trusting the usage block).
std::optional<int> token_count(const nlohmann::json& usage, const char* key) {
  const auto v = usage.find(key);
  if (v == usage.end() || !v->is_number_unsigned() || !json_integer_fits<int>(*v)) {
    return std::nullopt;
  }
  return v->get<int>();
}

void read_usage(const nlohmann::json& usage, StreamChunk& chunk) {
  if (!usage.is_object()) return;
  chunk.prompt_tokens = token_count(usage, "prompt_tokens");
  chunk.completion_tokens = token_count(usage, "completion_tokens");
}

}  // namespace

ApiKind parse_api_kind(const std::string& path) {
  if (path == "/v1/completions") return ApiKind::kCompletions;
  if (path == "/v1/chat/completions") return ApiKind::kChat;
  throw ConfigError("--endpoint '" + path + "': must be /v1/completions or /v1/chat/completions");
}

const char* api_path(ApiKind api) {
  return api == ApiKind::kChat ? "/v1/chat/completions" : "/v1/completions";
}

StreamChunk parse_stream_chunk(std::string_view data, ApiKind api) {
  StreamChunk chunk;
  if (data == "[DONE]") {
    chunk.done = true;
    return chunk;
  }
  const nlohmann::json j = nlohmann::json::parse(data, nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    chunk.error = "an event that is not a JSON object: '" + std::string(data.substr(0, 80)) +
                  (data.size() > 80 ? "...'" : "'");
    return chunk;
  }
  if (const auto error = j.find("error"); error != j.end() && !error->is_null()) {
    chunk.server_error = true;
    const auto message = error->is_object() ? error->find("message") : error->end();
    chunk.error = message != error->end() && message->is_string() ? message->get<std::string>()
                                                                  : error->dump();
    return chunk;
  }
  if (const auto choices = j.find("choices"); choices != j.end() && choices->is_array()) {
    for (const nlohmann::json& choice : *choices) chunk.has_token |= choice_has_token(choice, api);
  }
  if (const auto usage = j.find("usage"); usage != j.end()) read_usage(*usage, chunk);
  return chunk;
}

}  // namespace servesim
