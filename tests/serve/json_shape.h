// expect_same_shape: GoogleTest check that two JSON documents have the same keys, recursively,
// with values of the same JSON type (numbers of any kind count as one type; null matches
// anything, as vLLM's Optional fields are null or a value); arrays compare their first
// elements. `extra` lists keys `ours` may have beyond `theirs`.
#pragma once

#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

namespace servesim::testing {

inline std::string json_kind(const nlohmann::json& v) {
  return v.is_number() ? "number" : v.type_name();
}

inline void expect_same_shape(const nlohmann::json& ours, const nlohmann::json& theirs,
                              const std::set<std::string>& extra = {},
                              const std::string& path = "$") {
  if (ours.is_null() || theirs.is_null()) return;
  ASSERT_EQ(json_kind(ours), json_kind(theirs))
      << "at " << path << ": ours " << ours.dump() << ", vLLM's " << theirs.dump();
  if (ours.is_object()) {
    for (const auto& [key, value] : theirs.items()) {
      ASSERT_TRUE(ours.contains(key)) << "missing " << path << "." << key;
      expect_same_shape(ours[key], value, extra, path + "." + key);
    }
    for (const auto& [key, value] : ours.items()) {
      EXPECT_TRUE(theirs.contains(key) || extra.count(key) > 0)
          << "extra key " << path << "." << key;
    }
  } else if (ours.is_array() && !ours.empty() && !theirs.empty()) {
    expect_same_shape(ours.front(), theirs.front(), extra, path + "[0]");
  }
}

inline nlohmann::json vllm_fixture(const std::string& name) {
  std::ifstream in(std::string(SERVESIM_SOURCE_DIR) + "/tests/serve/data/" + name);
  return nlohmann::json::parse(in);
}

}  // namespace servesim::testing
