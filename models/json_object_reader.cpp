#include "models/json_object_reader.h"

#include <vector>

#include "models/name_match.h"

namespace servesim {

JsonObjectReader::JsonObjectReader(const nlohmann::json& object, std::string context)
    : object_(object), context_(std::move(context)) {
  if (!object_.is_object()) {
    throw ConfigError(context_ + ": expected a JSON object, got " +
                      std::string(object_.type_name()));
  }
}

bool JsonObjectReader::has(const std::string& key) const {
  auto it = object_.find(key);
  return it != object_.end() && !it->is_null();
}

const nlohmann::json& JsonObjectReader::raw(const std::string& key) {
  mark(key);
  static const nlohmann::json kNull;
  auto it = object_.find(key);
  return it == object_.end() ? kNull : *it;
}

int JsonObjectReader::positive_int(const std::string& key) {
  const int value = required<int>(key);
  if (value <= 0) fail(key, "must be > 0, got " + std::to_string(value));
  return value;
}

int JsonObjectReader::non_negative_int(const std::string& key, int fallback) {
  const int value = optional<int>(key, fallback);
  if (value < 0) fail(key, "must be >= 0, got " + std::to_string(value));
  return value;
}

void JsonObjectReader::finish() const {
  std::vector<std::string> known(read_.begin(), read_.end());
  for (auto it = object_.begin(); it != object_.end(); ++it) {
    if (read_.count(it.key()) == 0) {
      throw ConfigError(context_ + ": unknown key '" + it.key() + "'" +
                        did_you_mean(it.key(), known));
    }
  }
}

void JsonObjectReader::fail(const std::string& key, const std::string& problem) const {
  throw ConfigError(context_ + ": " + key + " " + problem);
}

}  // namespace servesim
