// ToolResultCache: the results one tool step's cache holds, shared by every session of the
// run (a cache in front of a search API serves all users). An entry per key: the time it
// expires, ttl_s after the tool run that stored it ended; a lookup at time t hits when t is
// before that. A miss does not reserve the key: two sessions missing the same key both run
// the tool (no request coalescing), and the later store wins.
// Memory: one double per key of the step's key space, allocated at the first lookup.
// Thread-safety: none.
#pragma once

#include <vector>

#include "sim/agent/cache_spec.h"

namespace servesim {

class ToolResultCache {
 public:
  explicit ToolResultCache(const ToolCacheSpec& spec) : spec_(spec) {}

  bool lookup(int key, double now_s);
  // The tool run for `key` ended successfully at now_s.
  void store(int key, double now_s);

 private:
  const ToolCacheSpec& spec_;
  std::vector<double> expires_s_;  // seconds, per key; -inf until stored
};

}  // namespace servesim
