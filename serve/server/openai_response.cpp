#include "serve/server/openai_response.h"

#include <cstdio>

#include "base/mix64.h"

namespace servesim {
namespace {

using json = nlohmann::ordered_json;

json stop_reason_json(const std::optional<int32_t>& stop_reason) {
  return stop_reason ? json(*stop_reason) : json(nullptr);
}

bool is_chat(const ResponseHeader& h) {
  return h.endpoint == Endpoint::kChatCompletions;
}

json head(const ResponseHeader& h, const char* object) {
  return {{"id", h.id}, {"object", object}, {"created", h.created}, {"model", h.model}};
}

// The UsageInfo fields vLLM sets. prompt_tokens_details stays None (it is set only with
// --enable-prompt-tokens-details and cached tokens), so a body that vLLM dumps with
// exclude_none or exclude_unset — the include_usage chunk, a chat chunk — leaves it out.
json set_usage_json(const Usage& u) {
  return {{"prompt_tokens", u.prompt_tokens},
          {"total_tokens", u.prompt_tokens + u.completion_tokens},
          {"completion_tokens", u.completion_tokens}};
}

}  // namespace

json usage_json(const Usage& u) {
  json j = set_usage_json(u);
  j["prompt_tokens_details"] = nullptr;
  return j;
}

json response_json(const ResponseHeader& h, const std::string& text, const ChoiceEnd& end,
                   const Usage& usage) {
  json choice;
  json j;
  if (is_chat(h)) {
    j = head(h, "chat.completion");
    choice = {{"index", 0},
              {"message",
               {{"role", "assistant"},
                {"content", text},
                {"refusal", nullptr},
                {"annotations", nullptr},
                {"audio", nullptr},
                {"function_call", nullptr},
                {"tool_calls", json::array()},
                {"reasoning_content", nullptr}}},
              {"logprobs", nullptr},
              {"finish_reason", end.finish_reason},
              {"stop_reason", stop_reason_json(end.stop_reason)}};
  } else {
    j = head(h, "text_completion");
    choice = {{"index", 0},
              {"text", text},
              {"logprobs", nullptr},
              {"finish_reason", end.finish_reason},
              {"stop_reason", stop_reason_json(end.stop_reason)},
              {"prompt_logprobs", nullptr}};
  }
  j["choices"] = json::array({choice});
  j["service_tier"] = nullptr;
  j["system_fingerprint"] = nullptr;
  j["usage"] = usage_json(usage);
  if (is_chat(h)) j["prompt_logprobs"] = nullptr;
  j["kv_transfer_params"] = nullptr;
  return j;
}

json chunk_json(const ResponseHeader& h, const std::string& text,
                const std::optional<ChoiceEnd>& end, bool first,
                const std::optional<Usage>& usage) {
  json j;
  json choice;
  if (is_chat(h)) {
    j = head(h, "chat.completion.chunk");
    json delta = json::object();
    if (first) delta["role"] = "assistant";
    delta["content"] = text;
    choice = {{"index", 0}, {"delta", delta}, {"logprobs", nullptr}};
    choice["finish_reason"] = end ? json(end->finish_reason) : json(nullptr);
    if (end) choice["stop_reason"] = stop_reason_json(end->stop_reason);
    j["choices"] = json::array({choice});
    if (usage) j["usage"] = set_usage_json(*usage);
    return j;
  }
  j = head(h, "text_completion");
  choice = {{"index", 0},
            {"text", text},
            {"logprobs", nullptr},
            {"finish_reason", end ? json(end->finish_reason) : json(nullptr)},
            {"stop_reason", end ? stop_reason_json(end->stop_reason) : json(nullptr)}};
  j["choices"] = json::array({choice});
  j["usage"] = usage ? usage_json(*usage) : json(nullptr);
  return j;
}

json usage_chunk_json(const ResponseHeader& h, const Usage& usage) {
  json j = head(h, is_chat(h) ? "chat.completion.chunk" : "text_completion");
  j["choices"] = json::array();
  j["usage"] = set_usage_json(usage);
  return j;
}

json error_json(const ApiError& e) {
  return {{"error",
           {{"message", e.what()},
            {"type", e.type()},
            {"param", e.param().empty() ? json(nullptr) : json(e.param())},
            {"code", e.status()}}}};
}

json models_json(const std::string& served_model_name, const std::string& root, int max_model_len,
                 int64_t created, const std::string& tokenizer_name) {
  const json permission = {{"id", "modelperm-" + response_id(Endpoint::kCompletions, 0).substr(5)},
                           {"object", "model_permission"},
                           {"created", created},
                           {"allow_create_engine", false},
                           {"allow_sampling", true},
                           {"allow_logprobs", false},
                           {"allow_search_indices", false},
                           {"allow_view", true},
                           {"allow_fine_tuning", false},
                           {"organization", "*"},
                           {"group", nullptr},
                           {"is_blocking", false}};
  const json card = {{"id", served_model_name},
                     {"object", "model"},
                     {"created", created},
                     {"owned_by", "servesim"},
                     {"root", root},
                     {"parent", nullptr},
                     {"max_model_len", max_model_len},
                     {"permission", json::array({permission})},
                     {"tokenizer", tokenizer_name}};
  return {{"object", "list"}, {"data", json::array({card})}};
}

std::string response_id(Endpoint endpoint, uint64_t sequence) {
  char hex[40];
  std::snprintf(hex, sizeof hex, "%016llx%016llx", static_cast<unsigned long long>(mix64(sequence)),
                static_cast<unsigned long long>(mix64(sequence ^ kGoldenGamma)));
  return (endpoint == Endpoint::kChatCompletions ? "chatcmpl-" : "cmpl-") + std::string(hex);
}

}  // namespace servesim
