#include "serve/loadtest/request_body.h"

#include <array>
#include <nlohmann/json.hpp>

namespace servesim {
namespace {

// Short common words, which BPE vocabularies usually hold whole (with their leading space).
constexpr std::array<const char*, 32> kWords = {
    "the", "of",  "and",  "to",   "in",   "is",   "on",    "for",  "it",   "with", "as",
    "at",  "be",  "this", "from", "by",   "or",   "an",    "was",  "are",  "not",  "but",
    "all", "can", "one",  "we",   "they", "more", "which", "time", "have", "new"};

std::string prompt_text(const std::vector<int32_t>& prompt) {
  std::string text;
  text.reserve(prompt.size() * 5);
  for (size_t i = 0; i < prompt.size(); ++i) {
    if (i > 0) text.push_back(' ');
    text += kWords[static_cast<uint32_t>(prompt[i]) % kWords.size()];
  }
  return text;
}

}  // namespace

std::string completion_request_body(const RequestSpec& spec, const std::vector<int32_t>& prompt,
                                    const std::string& model, ApiKind api) {
  nlohmann::json j;
  j["model"] = model;
  if (api == ApiKind::kChat) {
    j["messages"] = nlohmann::json::array({{{"role", "user"}, {"content", prompt_text(prompt)}}});
  } else {
    j["prompt"] = prompt;
  }
  j["max_tokens"] = spec.output_tokens;
  j["min_tokens"] = spec.output_tokens;
  j["ignore_eos"] = true;
  j["stream"] = true;
  j["stream_options"] = {{"include_usage", true}};
  return j.dump();
}

}  // namespace servesim
