#include "models/expert_load.h"

#include <algorithm>
#include <cmath>

namespace servesim {
namespace {

// Caps every share at `cap` and gives the excess to the uncapped experts in proportion to
// their shares, until none exceeds it. Shares are sorted descending, so capped experts are a
// prefix; each pass caps at least one more, so it ends within num_experts passes.
void cap_shares(std::vector<double>& shares, double cap) {
  size_t capped = 0;
  while (capped < shares.size() && shares[capped] > cap) {
    while (capped < shares.size() && shares[capped] > cap) ++capped;
    double rest = 0;
    for (size_t i = capped; i < shares.size(); ++i) rest += shares[i];
    const double left = 1 - cap * static_cast<double>(capped);
    for (size_t i = 0; i < capped; ++i) shares[i] = cap;
    if (rest <= 0) break;
    for (size_t i = capped; i < shares.size(); ++i) shares[i] *= left / rest;
  }
}

}  // namespace

ExpertLoad::ExpertLoad(int num_experts, int top_k, int ep, double zipf_exponent) : ep_(ep) {
  shares_.resize(static_cast<size_t>(num_experts));
  double total = 0;
  for (int i = 0; i < num_experts; ++i) {
    shares_[static_cast<size_t>(i)] = std::pow(static_cast<double>(i + 1), -zipf_exponent);
    total += shares_[static_cast<size_t>(i)];
  }
  for (double& s : shares_) s /= total;
  cap_shares(shares_, 1.0 / top_k);
  const int per_rank = num_experts / ep;
  if (per_rank >= num_experts) {
    busiest_share_ = 1;
    return;
  }
  const double hottest = shares_.front();
  busiest_share_ = hottest + (per_rank - 1) * (1 - hottest) / (num_experts - 1);
}

}  // namespace servesim
