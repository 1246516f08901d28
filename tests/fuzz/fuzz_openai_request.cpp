// libFuzzer target: a POST /v1/completions or /v1/chat/completions body, parsed as the engine
// server does (parse_generation_request, then resolve_max_tokens). Input layout: the first
// byte picks the endpoint (bit 0) and the vocabulary (bits 1-2: 32000, 257, 100 or 1 tokens,
// so both the full byte vocabulary and the unencodable-byte path are reached); the rest is the
// body. The contract here is the server's: an input either parses or is refused with an
// ApiError of status 400 and a message — what the session sends back as the response.
// Anything else escaping, or a parsed request the engine could not run, is a finding.
#include <array>
#include <cstdlib>
#include <string_view>

#include "serve/server/api_error.h"
#include "serve/server/byte_tokenizer.h"
#include "serve/server/openai_request.h"

namespace {

constexpr std::array<int, 4> kVocabSizes = {32000, 257, 100, 1};
constexpr int kMaxModelLen = 4096;  // tokens, a small model's context

// What the engine relies on once a request is accepted.
void check_invariants(const servesim::GenerationRequest& r, int vocab_size, int max_tokens) {
  bool ok = !r.prompt_token_ids.empty() && r.min_tokens >= 0 && max_tokens >= 1 &&
            r.min_tokens <= max_tokens &&
            static_cast<int64_t>(r.prompt_token_ids.size()) + max_tokens <= kMaxModelLen &&
            r.sampling.temperature >= 0 && r.sampling.top_p > 0 && r.sampling.top_p <= 1;
  for (int32_t t : r.prompt_token_ids) ok = ok && t >= 0 && t < vocab_size;
  for (int32_t t : r.stop_token_ids) ok = ok && t >= 0 && t < vocab_size;
  if (!ok) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const auto endpoint =
      (data[0] & 1) ? servesim::Endpoint::kChatCompletions : servesim::Endpoint::kCompletions;
  const int vocab_size = kVocabSizes[(data[0] >> 1) & 3];
  const servesim::ByteTokenizer tokenizer(vocab_size);
  const std::string_view body(reinterpret_cast<const char*>(data) + 1, size - 1);
  try {
    const servesim::GenerationRequest r =
        servesim::parse_generation_request(endpoint, body, tokenizer, vocab_size);
    check_invariants(r, vocab_size, servesim::resolve_max_tokens(r, kMaxModelLen));
  } catch (const servesim::ApiError& e) {
    // A refusal must be a 400 with something to say; a 500 would blame the server.
    if (e.status() != 400 || std::string_view(e.what()).empty()) std::abort();
  }
  return 0;
}
