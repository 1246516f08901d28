#include "sim/metrics/quantile_sketch.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace servesim {

namespace {

constexpr double kGamma =
    (1.0 + QuantileSketch::kRelativeError) / (1.0 - QuantileSketch::kRelativeError);
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

}  // namespace

QuantileSketch::QuantileSketch()
    : log_gamma_(std::log(kGamma)),
      inv_log_gamma_(1.0 / log_gamma_),
      min_(std::numeric_limits<double>::infinity()),
      max_(-std::numeric_limits<double>::infinity()) {
  lowest_ = static_cast<int>(std::ceil(std::log(kMinValue) / log_gamma_));
  const int highest = static_cast<int>(std::ceil(std::log(kMaxValue) / log_gamma_));
  counts_.assign(static_cast<size_t>(highest - lowest_ + 2), 0);
}

// Bucket i >= 1 holds (g^(k-1), g^k] with k = i - 1 + lowest.
int QuantileSketch::bucket_of(double value) const {
  if (value <= kMinValue) return 0;
  const int k = static_cast<int>(std::ceil(std::log(value) * inv_log_gamma_));
  const int i = k - lowest_ + 1;
  return std::clamp(i, 1, static_cast<int>(counts_.size()) - 1);
}

void QuantileSketch::add(double value) {
  value = std::max(value, 0.0);
  // Every sequence of a decode batch sees the same gap, so consecutive values repeat
  // and the logarithm can be skipped.
  if (value != last_value_) {
    last_value_ = value;
    last_bucket_ = bucket_of(value);
  }
  ++counts_[static_cast<size_t>(last_bucket_)];
  ++count_;
  sum_ += value;
  min_ = std::min(min_, value);
  max_ = std::max(max_, value);
}

void QuantileSketch::merge(const QuantileSketch& other) {
  for (size_t i = 0; i < counts_.size(); ++i) counts_[i] += other.counts_[i];
  count_ += other.count_;
  sum_ += other.sum_;
  min_ = std::min(min_, other.min_);
  max_ = std::max(max_, other.max_);
}

double QuantileSketch::mean() const {
  return count_ == 0 ? kNaN : sum_ / count_;
}
double QuantileSketch::min() const {
  return count_ == 0 ? kNaN : min_;
}
double QuantileSketch::max() const {
  return count_ == 0 ? kNaN : max_;
}

double QuantileSketch::value_at_rank(uint64_t rank) const {
  if (rank == 0) return min_;
  if (rank + 1 >= count_) return max_;
  uint64_t seen = 0;
  for (size_t i = 0; i < counts_.size(); ++i) {
    seen += counts_[i];
    if (seen > rank) {
      double estimate = 0.0;  // bucket 0: [0, kMinValue], absolute error <= kMinValue
      if (i > 0) {
        const int k = static_cast<int>(i) - 1 + lowest_;
        estimate = 2.0 * std::pow(kGamma, k) / (kGamma + 1.0);
      }
      // The exact extremes tighten the first and last buckets for free.
      return std::clamp(estimate, min_, max_);
    }
  }
  return max_;
}

double QuantileSketch::quantile(double p) const {
  if (count_ == 0) return kNaN;
  // Interpolating between the estimates of the two neighbouring order statistics keeps
  // numpy's linear definition and the relative-error bound (a convex combination).
  const double rank = std::clamp(p, 0.0, 100.0) / 100.0 * static_cast<double>(count_ - 1);
  const uint64_t lo = static_cast<uint64_t>(std::floor(rank));
  const uint64_t hi = std::min(lo + 1, count_ - 1);
  const double frac = rank - static_cast<double>(lo);
  const double v_lo = value_at_rank(lo);
  if (frac == 0.0) return v_lo;
  const double v_hi = value_at_rank(hi);
  return v_lo + (v_hi - v_lo) * frac;
}

}  // namespace servesim
