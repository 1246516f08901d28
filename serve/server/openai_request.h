// GenerationRequest: one POST /v1/completions or /v1/chat/completions body, parsed and checked
// the way vLLM's protocol.py (CompletionRequest, ChatCompletionRequest; vLLM 0.10) reads it,
// down to what servesim's engine runs: prompt token ids, output limits, stop tokens and
// sampling parameters.
//
//   GenerationRequest r = parse_generation_request(Endpoint::kCompletions, body, tokenizer, vocab);
//   const int max_tokens = resolve_max_tokens(r, max_model_len);   // vLLM's default and limit
//
// Fields, as vLLM: `prompt` (text, token ids, or a batch of one), `messages` (chat: rendered by
// apply_chat_template), `max_tokens` (completions default 16; chat default and
// `max_completion_tokens`: the rest of max_model_len), `min_tokens`, `ignore_eos`,
// `stop_token_ids`, `temperature` (default 1.0), `top_p`, `seed` (default 0 here: vLLM draws a
// random one, servesim stays deterministic), `stream`, `stream_options.include_usage` and
// `.continuous_usage_stats`, `model`. Fields that would change the output and that the engine
// cannot honour (`n` > 1, `best_of`, `echo`, `logprobs`, `stop` strings, penalties, beam
// search, tools, response formats, ...) are refused with a 400 naming them; every other field
// is ignored and listed in `ignored_fields` for the server's warning, as vLLM's
// OpenAIBaseModel (extra="allow") logs "fields were present in the request but ignored".
//
// Thread-safe: free functions over values.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/sampling_params.h"
#include "serve/server/tokenizer.h"

namespace servesim {

enum class Endpoint { kCompletions, kChatCompletions };

struct GenerationRequest {
  Endpoint endpoint = Endpoint::kCompletions;
  std::string model;  // as sent; "" when absent
  std::vector<int32_t> prompt_token_ids;
  std::optional<int> max_tokens;  // tokens; nullopt: the endpoint's default
  int min_tokens = 0;             // stop tokens are masked until this many outputs
  bool ignore_eos = false;        // true: EOS does not stop (stop_token_ids still do)
  std::vector<int32_t> stop_token_ids;
  SamplingParams sampling{.temperature = 1.0f, .top_p = 1.0f, .seed = 0};
  bool stream = false;
  bool include_usage = false;           // stream: a final chunk with the usage
  bool continuous_usage_stats = false;  // stream: usage in every chunk
  std::vector<std::string> ignored_fields;
};

// Token ids (prompts, stop_token_ids) must lie below the model's `vocab_size`. Throws ApiError
// (400) for malformed JSON, a field of the wrong type (naming it), a value out of range, a text
// prompt the tokenizer cannot encode for this model, a batch of more than one prompt, or a
// field servesim cannot honour.
GenerationRequest parse_generation_request(Endpoint endpoint, std::string_view body,
                                           const Tokenizer& tokenizer, int vocab_size);

// The output limit vLLM runs the request with: max_tokens, or its default (16 for completions,
// max_model_len minus the prompt for chat). Throws ApiError (400, vLLM's message) when the
// prompt is not shorter than max_model_len, or prompt plus max_tokens exceed it, or min_tokens
// exceeds max_tokens.
int resolve_max_tokens(const GenerationRequest& request, int max_model_len);

// The servesim chat template (there is no tokenizer_config.json to take one from): each message
// as "<|ROLE|>\n" CONTENT "\n", then the generation prompt "<|assistant|>\n".
std::string render_chat_template(const std::vector<std::pair<std::string, std::string>>& messages);

}  // namespace servesim
