#include "engine/sched/ngram_proposer.h"

#include <algorithm>

namespace servesim {

int NgramProposer::propose(std::span<const int32_t> tokens, std::vector<int32_t>& drafts) const {
  const int len = static_cast<int>(tokens.size());
  for (int n = std::min(max_n_, len - 1); n >= min_n_; --n) {
    const std::span<const int32_t> suffix = tokens.last(static_cast<size_t>(n));
    // Latest earlier start first; the match must end before the suffix begins to propose.
    for (int start = len - n - 1; start >= 0; --start) {
      if (!std::equal(suffix.begin(), suffix.end(), tokens.begin() + start)) continue;
      const int from = start + n;
      const int count = std::min(k_, len - from);
      drafts.insert(drafts.end(), tokens.begin() + from, tokens.begin() + from + count);
      return count;
    }
  }
  return 0;
}

}  // namespace servesim
