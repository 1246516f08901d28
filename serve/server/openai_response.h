// The JSON bodies of the OpenAI-compatible server, field for field as vLLM 0.10's protocol.py
// serialises them: CompletionResponse ("text_completion"), ChatCompletionResponse
// ("chat.completion"), their stream chunks (CompletionStreamResponse, "chat.completion.chunk"),
// the usage chunk of stream_options.include_usage, ErrorResponse, and the model list.
//
// Completion chunks carry every field (vLLM dumps them with their unset fields, "usage": null
// included); chat chunks only the set ones (vLLM dumps them with exclude_unset); the usage
// chunk no None field (exclude_none: no "prompt_tokens_details"). Thread-safe: free functions
// over values.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "serve/server/api_error.h"
#include "serve/server/openai_request.h"

namespace servesim {

// What every body of one request shares.
struct ResponseHeader {
  Endpoint endpoint = Endpoint::kCompletions;
  std::string id;       // "cmpl-..." or "chatcmpl-..."
  int64_t created = 0;  // seconds since the Unix epoch
  std::string model;    // the served model name
};

struct Usage {
  int prompt_tokens = 0;
  int completion_tokens = 0;
};

// How a choice ended: vLLM's finish_reason ("stop", "length", "abort") and stop_reason (the
// stop token id that ended it, null for EOS or any other end).
struct ChoiceEnd {
  std::string finish_reason;
  std::optional<int32_t> stop_reason;
};

// The whole response of a non-streaming request.
nlohmann::ordered_json response_json(const ResponseHeader& h, const std::string& text,
                                     const ChoiceEnd& end, const Usage& usage);

// One stream chunk: `text` is the delta; `end` on the last token's chunk; `first` marks the first
// chat chunk (it carries "role": "assistant"); `usage` with continuous_usage_stats.
nlohmann::ordered_json chunk_json(const ResponseHeader& h, const std::string& text,
                                  const std::optional<ChoiceEnd>& end, bool first,
                                  const std::optional<Usage>& usage);

// The last chunk before [DONE] with stream_options.include_usage: no choices, the usage.
nlohmann::ordered_json usage_chunk_json(const ResponseHeader& h, const Usage& usage);

nlohmann::ordered_json usage_json(const Usage& usage);
nlohmann::ordered_json error_json(const ApiError& error);

// GET /v1/models: one ModelCard, plus servesim's "tokenizer" field naming the tokenizer in use.
nlohmann::ordered_json models_json(const std::string& served_model_name, const std::string& root,
                                   int max_model_len, int64_t created,
                                   const std::string& tokenizer_name);

// "cmpl-" / "chatcmpl-" followed by 32 hex digits drawn from `sequence` (deterministic).
std::string response_id(Endpoint endpoint, uint64_t sequence);

}  // namespace servesim
