#include "serve/server/openai_request.h"

#include <algorithm>
#include <array>
#include <cstdio>
#include <limits>
#include <nlohmann/json.hpp>

#include "serve/server/api_error.h"

namespace servesim {
namespace {

using nlohmann::json;

// Fields each endpoint reads; every other field is ignored (and reported).
constexpr std::array kCommonFields = {"model",          "max_tokens",    "min_tokens", "ignore_eos",
                                      "stop_token_ids", "temperature",   "top_p",      "seed",
                                      "stream",         "stream_options"};

// Fields that change the output at anything but their default: refused rather than ignored.
// `is_default` says whether the sent value is the default (null counts as the default).
struct RefusedField {
  const char* name;
  bool (*is_default)(const json& v);
};

bool is_null_or_false(const json& v) {
  return v.is_null() || (v.is_boolean() && !v.get<bool>());
}
bool is_null_or_empty(const json& v) {
  return v.is_null() || ((v.is_array() || v.is_string() || v.is_object()) && v.empty());
}
bool is_null_or_number(const json& v, double d) {
  return v.is_null() || (v.is_number() && v.get<double>() == d);
}
bool is_null_or_one(const json& v) {
  return is_null_or_number(v, 1);
}
bool is_null_or_zero(const json& v) {
  return is_null_or_number(v, 0);
}
bool is_no_top_k(const json& v) {
  return is_null_or_zero(v) || is_null_or_number(v, -1);
}
bool is_text_format(const json& v) {
  return v.is_null() || (v.is_object() && v.value("type", json("text")) == json("text"));
}
bool is_no_tool_choice(const json& v) {
  return v.is_null() || v == json("none");
}

constexpr std::array<RefusedField, 19> kRefusedFields = {{
    {"n", is_null_or_one},
    {"best_of", [](const json& v) { return v.is_null() || is_null_or_one(v); }},
    {"echo", is_null_or_false},
    {"logprobs", [](const json& v) { return is_null_or_false(v); }},
    {"top_logprobs", is_null_or_zero},
    {"prompt_logprobs", [](const json& v) { return v.is_null(); }},
    {"stop", is_null_or_empty},
    {"suffix", [](const json& v) { return v.is_null(); }},
    {"frequency_penalty", is_null_or_zero},
    {"presence_penalty", is_null_or_zero},
    {"repetition_penalty", is_null_or_one},
    {"top_k", is_no_top_k},
    {"min_p", is_null_or_zero},
    {"logit_bias", is_null_or_empty},
    {"use_beam_search", is_null_or_false},
    {"tools", is_null_or_empty},
    {"tool_choice", is_no_tool_choice},
    {"response_format", is_text_format},
    {"allowed_token_ids", is_null_or_empty},
}};

std::string type_name(const json& v) {
  if (v.is_number_integer() || v.is_number_unsigned()) return "integer";
  if (v.is_number_float()) return "number";
  return v.type_name();
}

[[noreturn]] void wrong_type(const std::string& field, const char* expected, const json& v) {
  throw ApiError(400, field + ": expected " + expected + ", got " + type_name(v), field);
}

// The field when it is present and not null.
const json* field_of(const json& body, const char* name) {
  const auto it = body.find(name);
  return it == body.end() || it->is_null() ? nullptr : &*it;
}

std::optional<int64_t> get_integer(const json& body, const char* name) {
  const json* v = field_of(body, name);
  if (v == nullptr) return std::nullopt;
  if (!v->is_number_integer() && !v->is_number_unsigned()) wrong_type(name, "an integer", *v);
  if (v->is_number_unsigned() &&
      v->get<uint64_t>() > uint64_t{std::numeric_limits<int64_t>::max()}) {
    throw ApiError(400, std::string(name) + ": out of range", name);
  }
  return v->get<int64_t>();
}

std::optional<int> get_int(const json& body, const char* name) {
  const std::optional<int64_t> v = get_integer(body, name);
  if (!v) return std::nullopt;
  if (*v < std::numeric_limits<int>::min() || *v > std::numeric_limits<int>::max()) {
    throw ApiError(400, std::string(name) + ": " + std::to_string(*v) + " is out of range", name);
  }
  return static_cast<int>(*v);
}

std::optional<double> get_number(const json& body, const char* name) {
  const json* v = field_of(body, name);
  if (v == nullptr) return std::nullopt;
  if (!v->is_number()) wrong_type(name, "a number", *v);
  return v->get<double>();
}

std::optional<bool> get_bool(const json& body, const char* name, const std::string& path) {
  const json* v = field_of(body, name);
  if (v == nullptr) return std::nullopt;
  if (!v->is_boolean()) wrong_type(path, "a boolean", *v);
  return v->get<bool>();
}

std::vector<int32_t> token_list(const json& v, const std::string& field, int vocab_size) {
  std::vector<int32_t> tokens;
  tokens.reserve(v.size());
  for (const json& t : v) {
    if (!t.is_number_integer() && !t.is_number_unsigned()) {
      wrong_type(field, "a list of integer token ids", t);
    }
    const int64_t id = t.get<int64_t>();
    if (id < 0 || id >= vocab_size) {
      throw ApiError(400,
                     field + ": token id " + std::to_string(id) + " is outside the vocabulary of " +
                         std::to_string(vocab_size) + " tokens",
                     field);
    }
    tokens.push_back(static_cast<int32_t>(id));
  }
  return tokens;
}

std::vector<int32_t> encode_text(std::string_view text, const std::string& field,
                                 const Tokenizer& tokenizer) {
  Tokenizer::Encoded e = tokenizer.encode(text);
  if (!e.error.empty())
    throw ApiError(400, field + ": " + e.error + "; send token ids instead", field);
  return std::move(e.tokens);
}

// prompt: a string, a list of token ids, or a batch (a list of strings or of token-id lists)
// of exactly one prompt.
std::vector<int32_t> parse_prompt(const json& body, const Tokenizer& tokenizer, int vocab_size) {
  const json* p = field_of(body, "prompt");
  if (p == nullptr) throw ApiError(400, "prompt: required for /v1/completions", "prompt");
  if (p->is_string()) return encode_text(p->get<std::string>(), "prompt", tokenizer);
  if (!p->is_array()) wrong_type("prompt", "a string or a list of token ids", *p);
  if (p->empty()) return {};
  const json& first = p->front();
  if (first.is_string() || first.is_array()) {
    if (p->size() != 1) {
      throw ApiError(400,
                     "prompt: a batch of " + std::to_string(p->size()) +
                         " prompts; servesim engine serve takes one prompt per request",
                     "prompt");
    }
    if (first.is_string()) return encode_text(first.get<std::string>(), "prompt", tokenizer);
    return token_list(first, "prompt", vocab_size);
  }
  return token_list(*p, "prompt", vocab_size);
}

// A message's content: a string, or a list of {"type": "text", "text": ...} parts.
std::string message_content(const json& m, size_t index) {
  const std::string field = "messages[" + std::to_string(index) + "].content";
  const auto it = m.find("content");
  if (it == m.end() || it->is_null()) return "";
  if (it->is_string()) return it->get<std::string>();
  if (!it->is_array()) wrong_type(field, "a string or a list of text parts", *it);
  std::string text;
  for (const json& part : *it) {
    if (!part.is_object() || part.value("type", json()) != json("text") || !part.contains("text") ||
        !part["text"].is_string()) {
      throw ApiError(400, field + ": only {\"type\": \"text\", \"text\": ...} parts are supported",
                     field);
    }
    text += part["text"].get<std::string>();
  }
  return text;
}

std::vector<int32_t> parse_messages(const json& body, const Tokenizer& tokenizer) {
  const json* ms = field_of(body, "messages");
  if (ms == nullptr) throw ApiError(400, "messages: required for /v1/chat/completions", "messages");
  if (!ms->is_array()) wrong_type("messages", "a list of messages", *ms);
  if (ms->empty()) throw ApiError(400, "messages: the list is empty", "messages");
  std::vector<std::pair<std::string, std::string>> messages;
  for (size_t i = 0; i < ms->size(); ++i) {
    const json& m = (*ms)[i];
    const std::string field = "messages[" + std::to_string(i) + "]";
    if (!m.is_object()) wrong_type(field, "an object", m);
    const auto role = m.find("role");
    if (role == m.end() || !role->is_string()) {
      throw ApiError(400, field + ".role: required, a string", field + ".role");
    }
    messages.emplace_back(role->get<std::string>(), message_content(m, i));
  }
  return encode_text(render_chat_template(messages), "messages", tokenizer);
}

void check_refused_fields(const json& body) {
  for (const RefusedField& f : kRefusedFields) {
    const auto it = body.find(f.name);
    if (it != body.end() && !f.is_default(*it)) {
      throw ApiError(400,
                     std::string(f.name) + ": " + it->dump() +
                         " is not supported by servesim engine serve (only its default)",
                     f.name);
    }
  }
}

void parse_stream_options(const json& body, GenerationRequest& r) {
  const json* so = field_of(body, "stream_options");
  if (so == nullptr) return;
  if (!so->is_object()) wrong_type("stream_options", "an object", *so);
  if (!r.stream) {
    throw ApiError(400, "stream_options: can only be defined when `stream=True`", "stream_options");
  }
  // vLLM's StreamOptions: include_usage defaults to true once stream_options is given.
  r.include_usage = get_bool(*so, "include_usage", "stream_options.include_usage").value_or(true);
  r.continuous_usage_stats =
      get_bool(*so, "continuous_usage_stats", "stream_options.continuous_usage_stats")
          .value_or(false);
}

void parse_sampling(const json& body, GenerationRequest& r) {
  if (const auto t = get_number(body, "temperature")) {
    if (*t < 0)
      throw ApiError(400, "temperature: must be >= 0, got " + std::to_string(*t), "temperature");
    r.sampling.temperature = static_cast<float>(*t);
  }
  if (const auto p = get_number(body, "top_p")) {
    if (!(*p > 0 && *p <= 1)) {
      throw ApiError(400, "top_p: must be in (0, 1], got " + std::to_string(*p), "top_p");
    }
    r.sampling.top_p = static_cast<float>(*p);
  }
  if (const auto s = get_integer(body, "seed")) r.sampling.seed = static_cast<uint64_t>(*s);
}

void parse_limits(const json& body, GenerationRequest& r, int vocab_size) {
  const char* max_name = "max_tokens";
  if (r.endpoint == Endpoint::kChatCompletions && field_of(body, "max_completion_tokens")) {
    max_name = "max_completion_tokens";
  }
  r.max_tokens = get_int(body, max_name);
  if (r.max_tokens && *r.max_tokens < 1) {
    throw ApiError(
        400, std::string(max_name) + ": must be at least 1, got " + std::to_string(*r.max_tokens),
        max_name);
  }
  r.min_tokens = get_int(body, "min_tokens").value_or(0);
  if (r.min_tokens < 0) {
    throw ApiError(400, "min_tokens: must be >= 0, got " + std::to_string(r.min_tokens),
                   "min_tokens");
  }
  r.ignore_eos = get_bool(body, "ignore_eos", "ignore_eos").value_or(false);
  if (const json* s = field_of(body, "stop_token_ids")) {
    if (!s->is_array()) wrong_type("stop_token_ids", "a list of integer token ids", *s);
    r.stop_token_ids = token_list(*s, "stop_token_ids", vocab_size);
  }
}

void collect_ignored(const json& body, GenerationRequest& r) {
  const char* own = r.endpoint == Endpoint::kCompletions ? "prompt" : "messages";
  for (const auto& [key, value] : body.items()) {
    const bool known =
        key == own ||
        (r.endpoint == Endpoint::kChatCompletions && key == "max_completion_tokens") ||
        std::find(kCommonFields.begin(), kCommonFields.end(), key) != kCommonFields.end() ||
        std::any_of(kRefusedFields.begin(), kRefusedFields.end(),
                    [&](const RefusedField& f) { return key == f.name; });
    if (!known) r.ignored_fields.push_back(key);
  }
}

}  // namespace

GenerationRequest parse_generation_request(Endpoint endpoint, std::string_view body,
                                           const Tokenizer& tokenizer, int vocab_size) {
  json j = json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) throw ApiError(400, "the request body is not valid JSON");
  if (!j.is_object())
    throw ApiError(400, "the request body must be a JSON object, got " + type_name(j));
  GenerationRequest r;
  r.endpoint = endpoint;
  if (const json* m = field_of(j, "model")) {
    if (!m->is_string()) wrong_type("model", "a string", *m);
    r.model = m->get<std::string>();
  }
  check_refused_fields(j);
  r.prompt_token_ids = endpoint == Endpoint::kCompletions ? parse_prompt(j, tokenizer, vocab_size)
                                                          : parse_messages(j, tokenizer);
  if (r.prompt_token_ids.empty()) {
    throw ApiError(
        400, "prompt: empty; the " + tokenizer.name() + " tokenizer has no BOS token to start from",
        "prompt");
  }
  r.stream = get_bool(j, "stream", "stream").value_or(false);
  parse_stream_options(j, r);
  parse_sampling(j, r);
  parse_limits(j, r, vocab_size);
  collect_ignored(j, r);
  return r;
}

int resolve_max_tokens(const GenerationRequest& r, int max_model_len) {
  const int prompt = static_cast<int>(r.prompt_token_ids.size());
  const std::string limit = "This model's maximum context length is " +
                            std::to_string(max_model_len) + " tokens. However, ";
  if (prompt >= max_model_len) {
    throw ApiError(400, limit + "your request has " + std::to_string(prompt) +
                            " input tokens. Please reduce the length of the input messages.");
  }
  int max_tokens = max_model_len - prompt;
  if (r.max_tokens) {
    max_tokens = *r.max_tokens;
  } else if (r.endpoint == Endpoint::kCompletions) {
    max_tokens = 16;  // CompletionRequest's default, checked against max_model_len as sent
  }
  if (static_cast<int64_t>(prompt) + max_tokens > max_model_len) {
    throw ApiError(400,
                   limit + "you requested " + std::to_string(int64_t{prompt} + max_tokens) +
                       " tokens (" + std::to_string(prompt) + " in the messages, " +
                       std::to_string(max_tokens) +
                       " in the completion). Please reduce the length of the messages or "
                       "completion.",
                   "max_tokens");
  }
  if (r.min_tokens > max_tokens) {
    throw ApiError(400,
                   "min_tokens: must be less than or equal to max_tokens=" +
                       std::to_string(max_tokens) + ", got " + std::to_string(r.min_tokens),
                   "min_tokens");
  }
  return max_tokens;
}

std::string render_chat_template(const std::vector<std::pair<std::string, std::string>>& messages) {
  std::string text;
  for (const auto& [role, content] : messages) text += "<|" + role + "|>\n" + content + "\n";
  return text + "<|assistant|>\n";
}

}  // namespace servesim
