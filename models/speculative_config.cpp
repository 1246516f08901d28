#include "models/speculative_config.h"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "models/catalog.h"
#include "models/config_error.h"
#include "models/json_object_reader.h"

namespace servesim {
namespace {

// vLLM's config/speculative.py (0.11): both lengths 5 when neither is given.
constexpr int kDefaultPromptLookup = 5;

SpeculativeMethod parse_method(JsonObjectReader& r, bool has_model) {
  const std::string name = r.optional<std::string>("method", has_model ? "draft_model" : "");
  if (name == "ngram" || name == "[ngram]") return SpeculativeMethod::kNgram;
  if (name == "draft_model") return SpeculativeMethod::kDraftModel;
  if (name == "mtp" || name == "deepseek_mtp") return SpeculativeMethod::kMtp;
  if (name == "eagle" || name == "eagle3") return SpeculativeMethod::kEagle;
  if (name.empty()) r.fail("method", "is required (ngram, draft_model, mtp or eagle)");
  r.fail("method", "must be ngram, draft_model, mtp or eagle (got \"" + name + "\")");
}

void read_prompt_lookup(JsonObjectReader& r, SpeculativeConfig& s) {
  const bool has_min = r.has("prompt_lookup_min");
  const bool has_max = r.has("prompt_lookup_max");
  s.prompt_lookup_min = has_min ? r.positive_int("prompt_lookup_min") : 0;
  s.prompt_lookup_max = has_max ? r.positive_int("prompt_lookup_max") : 0;
  if (!has_min) r.raw("prompt_lookup_min");
  if (!has_max) r.raw("prompt_lookup_max");
  if (s.method != SpeculativeMethod::kNgram) {
    if (has_min || has_max)
      r.fail(has_min ? "prompt_lookup_min" : "prompt_lookup_max", "applies to method ngram only");
    return;
  }
  if (!has_min && !has_max) s.prompt_lookup_min = s.prompt_lookup_max = kDefaultPromptLookup;
  if (!has_min) s.prompt_lookup_min = s.prompt_lookup_max;
  if (!has_max) s.prompt_lookup_max = s.prompt_lookup_min;
  if (s.prompt_lookup_min > s.prompt_lookup_max) {
    r.fail("prompt_lookup_min",
           "must be <= prompt_lookup_max (" + std::to_string(s.prompt_lookup_max) + ")");
  }
}

void read_acceptance(JsonObjectReader& r, SpeculativeConfig& s) {
  const int k = s.num_speculative_tokens;
  const bool has_rate = r.has("acceptance_rate");
  const bool has_list = r.has("acceptance_per_position");
  if (has_rate && has_list) {
    r.fail("acceptance_rate", "and acceptance_per_position exclude each other; give one");
  }
  if (!has_rate && !has_list) {  // vLLM's own form: fine for memory, not for a simulation
    r.raw("acceptance_rate");
    r.raw("acceptance_per_position");
    return;
  }
  const auto check = [&](double p, const std::string& key) {
    if (!(p >= 0 && p <= 1)) r.fail(key, "must be in [0, 1] (got " + std::to_string(p) + ")");
  };
  if (has_rate) {
    const double a = r.required<double>("acceptance_rate");
    check(a, "acceptance_rate");
    s.acceptance.assign(static_cast<size_t>(k), a);
    r.raw("acceptance_per_position");
    return;
  }
  r.raw("acceptance_rate");
  const nlohmann::json& list = r.raw("acceptance_per_position");
  if (!list.is_array() || static_cast<int>(list.size()) != k) {
    r.fail("acceptance_per_position",
           "must be a list of num_speculative_tokens (" + std::to_string(k) + ") probabilities");
  }
  for (const nlohmann::json& p : list) {
    if (!p.is_number()) r.fail("acceptance_per_position", "must hold numbers, got " + p.dump());
    check(p.get<double>(), "acceptance_per_position");
    s.acceptance.push_back(p.get<double>());
  }
}

void read_match_rate(JsonObjectReader& r, SpeculativeConfig& s) {
  if (!r.has("match_rate")) {
    r.raw("match_rate");
    return;
  }
  if (s.method != SpeculativeMethod::kNgram) {
    r.fail("match_rate",
           "applies to method ngram only (a draft model or head proposes every step)");
  }
  s.match_rate = r.required<double>("match_rate");
  if (!(s.match_rate > 0 && s.match_rate <= 1)) {
    r.fail("match_rate", "must be in (0, 1] (got " + std::to_string(s.match_rate) +
                             "); without matches, turn speculation off");
  }
}

}  // namespace

std::string_view speculative_method_name(SpeculativeMethod method) {
  switch (method) {
    case SpeculativeMethod::kNgram:
      return "ngram";
    case SpeculativeMethod::kDraftModel:
      return "draft_model";
    case SpeculativeMethod::kMtp:
      return "mtp";
    case SpeculativeMethod::kEagle:
      return "eagle";
  }
  return "ngram";
}

SpeculativeConfig SpeculativeConfig::from_json(const nlohmann::json& object,
                                               const std::string& context, const Catalog* catalog) {
  if (!object.is_object()) throw ConfigError(context + " must be a JSON object");
  JsonObjectReader r(object, context);
  SpeculativeConfig s;
  const bool has_model = r.has("model");
  s.method = parse_method(r, has_model);
  s.num_speculative_tokens = r.required<int>("num_speculative_tokens");
  if (s.num_speculative_tokens < 1 || s.num_speculative_tokens > kMaxSpeculativeDraftTokens) {
    r.fail("num_speculative_tokens", "must be between 1 and " +
                                         std::to_string(kMaxSpeculativeDraftTokens) + " (got " +
                                         std::to_string(s.num_speculative_tokens) + ")");
  }
  s.draft_model_name = r.optional<std::string>("model", "");
  if (s.method == SpeculativeMethod::kDraftModel) {
    if (s.draft_model_name.empty()) r.fail("model", "is required for method draft_model");
    if (catalog != nullptr) {
      s.draft_model = std::make_shared<const ModelSpec>(catalog->resolve_model(s.draft_model_name));
    }
  } else if (s.method == SpeculativeMethod::kNgram && has_model) {
    r.fail("model", "does not apply to method ngram (drafts come from the prompt)");
  }
  read_prompt_lookup(r, s);
  read_acceptance(r, s);
  read_match_rate(r, s);
  r.finish();
  return s;
}

SpeculativeConfig SpeculativeConfig::from_text(const std::string& text, const std::string& flag,
                                               const Catalog* catalog) {
  const nlohmann::json object = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (object.is_discarded()) {
    throw ConfigError(flag + ": not valid JSON; write it as vLLM takes it, e.g. " +
                      "'{\"method\":\"ngram\",\"num_speculative_tokens\":4,"
                      "\"acceptance_rate\":0.6}'");
  }
  return from_json(object, flag, catalog);
}

void SpeculativeConfig::validate(const ModelSpec& target) const {
  if (method != SpeculativeMethod::kDraftModel || !draft_model) return;
  if (draft_model->vocab_size != target.vocab_size) {
    throw ConfigError("speculative.model: draft " + draft_model->name + " has a vocabulary of " +
                      std::to_string(draft_model->vocab_size) + " tokens but " + target.name +
                      " has " + std::to_string(target.vocab_size) +
                      "; pick a draft model of the same tokenizer family");
  }
}

double SpeculativeConfig::expected_tokens_per_step() const {
  double expected = 1;
  double reach = 1;  // probability that every draft so far was accepted
  for (double p : acceptance) {
    reach *= p;
    expected += reach;
  }
  return expected;
}

double SpeculativeConfig::expected_tokens_per_decode() const {
  return 1 + match_rate * (expected_tokens_per_step() - 1);
}

void SpeculativeConfig::set_measured_acceptance(int64_t num_decodes, int64_t num_drafts,
                                                std::span<const int64_t> accepted) {
  match_rate = 1;
  if (method == SpeculativeMethod::kNgram && num_decodes > 0) {
    match_rate = std::min(1.0, static_cast<double>(num_drafts) / static_cast<double>(num_decodes));
  }
  acceptance.assign(accepted.size(), 0.0);
  int64_t reached = num_drafts;
  for (size_t p = 0; p < accepted.size(); ++p) {
    if (reached > 0)
      acceptance[p] = static_cast<double>(accepted[p]) / static_cast<double>(reached);
    reached = accepted[p];
  }
}

nlohmann::json SpeculativeConfig::simulator_json() const {
  nlohmann::json j = vllm_json();
  j["acceptance_per_position"] = acceptance;
  if (match_rate != 1) j["match_rate"] = match_rate;
  return j;
}

nlohmann::json SpeculativeConfig::vllm_json() const {
  nlohmann::json j;
  j["method"] = std::string(speculative_method_name(method));
  if (draft_model && !draft_model->hf_repo.empty()) {
    j["model"] = draft_model->hf_repo;  // what vLLM loads
  } else if (!draft_model_name.empty()) {
    j["model"] = draft_model_name;
  }
  j["num_speculative_tokens"] = num_speculative_tokens;
  if (method == SpeculativeMethod::kNgram) {
    j["prompt_lookup_max"] = prompt_lookup_max;
    j["prompt_lookup_min"] = prompt_lookup_min;
  }
  return j;
}

}  // namespace servesim
