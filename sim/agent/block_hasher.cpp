#include "sim/agent/block_hasher.h"

#include <algorithm>

#include "base/mix64.h"
#include "sim/agent/session_trace.h"

namespace servesim {

void BlockHasher::absorb_pending() {
  if (!has_pending_) return;
  const uint64_t key = pending_source_ * 0x9e3779b97f4a7c15ULL + pending_id_;
  state_.lo = mix64(mix64(mix64(state_.lo ^ key) ^ pending_start_) ^
                    static_cast<uint64_t>(pending_tokens_));
  state_.hi = mix64(mix64(mix64(state_.hi + key + 0x94d049bb133111ebULL) + pending_start_) +
                    static_cast<uint64_t>(pending_tokens_));
  has_pending_ = false;
}

void BlockHasher::add(uint64_t source, uint64_t id, uint64_t start, int tokens) {
  while (tokens > 0) {
    const int take = std::min(tokens, kTraceBlockTokens - filled_);
    const bool contiguous = has_pending_ && pending_source_ == source && pending_id_ == id &&
                            pending_start_ + static_cast<uint64_t>(pending_tokens_) == start;
    if (contiguous) {
      pending_tokens_ += take;
    } else {
      absorb_pending();
      has_pending_ = true;
      pending_source_ = source;
      pending_id_ = id;
      pending_start_ = start;
      pending_tokens_ = take;
    }
    filled_ += take;
    start += static_cast<uint64_t>(take);
    tokens -= take;
    if (filled_ == kTraceBlockTokens) {
      absorb_pending();
      hashes_.push_back(state_);
      filled_ = 0;  // the next block starts from this one's hash: the chain
    }
  }
}

}  // namespace servesim
