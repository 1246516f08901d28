#include "sim/metrics/setup_difference.h"

#include <algorithm>
#include <map>
#include <string_view>

namespace servesim {
namespace {

// When and where a run happened: never the reason two runs' numbers differ.
bool volatile_key(std::string_view key) {
  return key == "started_at" || key == "client.started_at" || key == "client.host" ||
         key == "client_host";
}

void flatten(const nlohmann::json& node, const std::string& prefix,
             std::map<std::string, nlohmann::json>& out) {
  if (node.is_object() && !node.empty()) {
    for (const auto& [key, value] : node.items()) {
      flatten(value, prefix.empty() ? key : prefix + "." + key, out);
    }
    return;
  }
  if (!volatile_key(prefix)) out.emplace(prefix, node);
}

std::map<std::string, nlohmann::json> flattened(const nlohmann::json& setup) {
  std::map<std::string, nlohmann::json> out;
  flatten(setup, "", out);
  return out;
}

}  // namespace

SetupDiff diff_setups(const nlohmann::json& reference, const nlohmann::json& other) {
  SetupDiff diff;
  if (!reference.is_object() || !other.is_object()) return diff;
  diff.compared = true;
  const std::map<std::string, nlohmann::json> a = flattened(reference);
  const std::map<std::string, nlohmann::json> b = flattened(other);
  for (const auto& [key, value] : a) {
    const auto it = b.find(key);
    if (it == b.end()) {
      ++diff.only_in_one;
    } else if (it->second != value) {
      diff.differences.push_back({key, value, it->second});
    }
  }
  for (const auto& entry : b) {
    if (a.find(entry.first) == a.end()) ++diff.only_in_one;
  }
  return diff;
}

std::string describe_setup_diff(const SetupDiff& diff, size_t max_listed) {
  std::string text;
  const size_t listed = std::min(max_listed, diff.differences.size());
  for (size_t i = 0; i < listed; ++i) {
    const SetupDifference& d = diff.differences[i];
    text += (i == 0 ? "" : "; ") + d.key + " " + d.reference.dump() + " → " + d.value.dump();
  }
  if (diff.differences.size() > listed) {
    text += " … and " + std::to_string(diff.differences.size() - listed) + " more";
  }
  if (text.empty()) text = "same setup";
  if (diff.only_in_one > 0) {
    text += " (" + std::to_string(diff.only_in_one) + " key" + (diff.only_in_one == 1 ? "" : "s") +
            " only in one run)";
  }
  return text;
}

nlohmann::json setup_diff_json(const SetupDiff& diff) {
  nlohmann::json out = nlohmann::json::array();
  for (const SetupDifference& d : diff.differences) {
    out.push_back({{"key", d.key}, {"reference", d.reference}, {"value", d.value}});
  }
  return out;
}

}  // namespace servesim
