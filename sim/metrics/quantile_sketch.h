// QuantileSketch: a bounded-memory quantile estimator for streams too long to store, such
// as every inter-token gap of a million requests. A log-bucketed histogram (the DDSketch
// idea): bucket i holds values in (g^(i-1), g^i] with g = (1 + a)/(1 - a), and reports
// 2 g^i / (g + 1), which is within relative error a of every value in the bucket.
//
// Accuracy: quantile(p) is within kRelativeError (0.5%) of numpy.percentile(values, p)
// (linear interpolation) for values in [kMinValue, kMaxValue]; values below kMinValue count
// as kMinValue's bucket, above kMaxValue as the top bucket; min/max/mean are exact.
// Memory: a fixed ~2,700 counters (about 21 KiB), whatever the stream length.
// Thread-safety: none; merge() sketches from several threads or replicas afterwards.
#pragma once

#include <cstdint>
#include <vector>

namespace servesim {

class QuantileSketch {
 public:
  static constexpr double kRelativeError = 0.005;
  static constexpr double kMinValue = 1e-6;  // seconds, for ITL: a microsecond
  static constexpr double kMaxValue = 1e5;   // seconds, about a day

  QuantileSketch();

  // REQUIRES: value >= 0 (negative values are clamped to 0 and counted).
  void add(double value);
  void merge(const QuantileSketch& other);

  uint64_t count() const { return count_; }
  // NaN when empty.
  double mean() const;
  double min() const;
  double max() const;
  // numpy-linear percentile estimate, p in [0, 100]; NaN when empty.
  double quantile(double p) const;

 private:
  int bucket_of(double value) const;
  double value_at_rank(uint64_t rank) const;

  double log_gamma_;
  double inv_log_gamma_;
  int lowest_;                    // exponent k of the first bucket above kMinValue, (g^(k-1), g^k]
  std::vector<uint64_t> counts_;  // counts_[0]: values <= kMinValue (zeros included)
  double last_value_ = -1.0;      // the last value added and its bucket; -1 matches no value
  int last_bucket_ = 0;
  uint64_t count_ = 0;
  double sum_ = 0.0;
  double min_;
  double max_;
};

}  // namespace servesim
