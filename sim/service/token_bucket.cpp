#include "sim/service/token_bucket.h"

#include <algorithm>
#include <stdexcept>

namespace servesim {

TokenBucket::TokenBucket(double rate_per_s, double capacity)
    : rate_per_s_(rate_per_s), capacity_(capacity), level_(capacity) {
  if (!(rate_per_s_ > 0) || !(capacity_ > 0)) throw std::invalid_argument("TokenBucket: bad rate");
}

double TokenBucket::level(double now_s) const {
  return std::min(capacity_, level_ + (now_s - last_s_) * rate_per_s_);
}

bool TokenBucket::try_take(double now_s, double cost) {
  level_ = level(now_s);
  last_s_ = now_s;
  if (level_ < cost) return false;
  level_ -= cost;
  return true;
}

}  // namespace servesim
