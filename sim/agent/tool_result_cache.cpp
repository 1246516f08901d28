#include "sim/agent/tool_result_cache.h"

#include <limits>

namespace servesim {

bool ToolResultCache::lookup(int key, double now_s) {
  if (expires_s_.empty()) {
    expires_s_.assign(static_cast<size_t>(spec_.keys), -std::numeric_limits<double>::infinity());
  }
  return now_s < expires_s_[static_cast<size_t>(key)];
}

void ToolResultCache::store(int key, double now_s) {
  if (expires_s_.empty()) lookup(key, now_s);
  expires_s_[static_cast<size_t>(key)] = now_s + spec_.ttl_s;
}

}  // namespace servesim
