// JsonObjectReader: strict reading of one JSON object of a config file. Every key must be
// read (required or optional) before finish(); a key nobody asked for is an error that names
// it and the closest valid key, so a typo never becomes a silent default.
//
// Owns nothing but the list of keys read; borrows the json object, which must outlive it.
// Not thread-safe. Error messages are one line and start with `context` (e.g. the file
// name and the object's path: "llama.json: moe").
#pragma once

#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "models/config_error.h"

namespace servesim {

// Whether a JSON integer (REQUIRES: is_number_integer()) lies in T's range: nlohmann's get<T>()
// would wrap one beyond it silently.
template <typename T>
bool json_integer_fits(const nlohmann::json& integer) {
  if (integer.is_number_unsigned()) {
    return integer.get<uint64_t>() <= static_cast<uint64_t>(std::numeric_limits<T>::max());
  }
  const int64_t x = integer.get<int64_t>();
  if constexpr (std::is_unsigned_v<T>) {
    return x >= 0 && static_cast<uint64_t>(x) <= std::numeric_limits<T>::max();
  } else {
    return x >= std::numeric_limits<T>::min() && x <= std::numeric_limits<T>::max();
  }
}

class JsonObjectReader {
 public:
  JsonObjectReader(const nlohmann::json& object, std::string context);

  bool has(const std::string& key) const;  // present and not null

  // The value of a required key; ConfigError if missing or of the wrong type.
  template <typename T>
  T required(const std::string& key) {
    if (!has(key)) fail(key, "is required");
    return convert<T>(key);
  }

  // The value of an optional key, or `fallback` when absent or null.
  template <typename T>
  T optional(const std::string& key, const T& fallback) {
    if (!has(key)) {
      mark(key);
      return fallback;
    }
    return convert<T>(key);
  }

  // The raw sub-value (marks the key as read); null json when absent.
  const nlohmann::json& raw(const std::string& key);

  // Number that must be > 0 (integers) or in (lo, hi] style checks done by callers.
  int positive_int(const std::string& key);
  int non_negative_int(const std::string& key, int fallback);

  // Throws on the first key that was never read.
  void finish() const;

  [[noreturn]] void fail(const std::string& key, const std::string& problem) const;
  const std::string& context() const { return context_; }

 private:
  void mark(const std::string& key) { read_.insert(key); }

  template <typename T>
  T convert(const std::string& key) {
    mark(key);
    const nlohmann::json& value = object_.at(key);
    if constexpr (std::is_same_v<T, bool>) {
      if (!value.is_boolean()) fail(key, "must be true or false, got " + value.dump());
    } else if constexpr (std::is_integral_v<T>) {
      if (!value.is_number_integer()) fail(key, "must be an integer, got " + value.dump());
      // get<T>() would wrap a value beyond T silently (4294967297 -> 1 for an int).
      if (!json_integer_fits<T>(value)) fail(key, "has an out-of-range value " + value.dump());
    } else if constexpr (std::is_floating_point_v<T>) {
      if (!value.is_number()) fail(key, "must be a number, got " + value.dump());
    } else if constexpr (std::is_same_v<T, std::string>) {
      if (!value.is_string()) fail(key, "must be a string, got " + value.dump());
    }
    try {
      return value.get<T>();
    } catch (const nlohmann::json::exception&) {
      fail(key, "has an out-of-range value " + value.dump());
    }
  }

  const nlohmann::json& object_;
  std::string context_;
  std::set<std::string> read_;
};

}  // namespace servesim
