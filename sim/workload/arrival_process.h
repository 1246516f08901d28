// ArrivalProcess: when the next open-loop request (or session) arrives. A small stateful
// value type: it remembers the last arrival, and each next_arrival_s() draws from the Rng
// passed in, so the caller decides which random stream arrivals use.
//
// Kinds (JSON "arrival": {"type": ...}):
//   poisson  {rate_qps}          exponential gaps, mean 1/rate, CV 1
//   gamma    {rate_qps, cv}      gamma gaps with mean 1/rate and coefficient of variation cv
//                                (shape 1/cv^2): cv > 1 is burstier than Poisson
//   constant {rate_qps}          gaps exactly 1/rate; first arrival at 0
//   onoff    {rate_qps, on_s, off_s}  Poisson at rate_qps during on periods, silence during
//                                off periods; starts with an on period at 0
// The first arrival of a random process is one gap after time 0.
// Thread-safety: none.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "sim/core/rng.h"

namespace servesim {

class ArrivalProcess {
 public:
  enum class Kind { kPoisson, kGamma, kConstant, kOnOff };

  static ArrivalProcess poisson(double rate_qps);
  static ArrivalProcess gamma(double rate_qps, double cv);
  static ArrivalProcess constant(double rate_qps);
  static ArrivalProcess on_off(double rate_qps, double on_s, double off_s);
  // Throws ConfigError naming the field (path is e.g. "workload.arrival").
  static ArrivalProcess from_json(const nlohmann::json& j, const std::string& path);

  // Seconds of the next arrival; non-decreasing across calls.
  double next_arrival_s(Rng& rng);

  Kind kind() const { return kind_; }
  // Long-run requests per second.
  double mean_rate_qps() const;

 private:
  Kind kind_ = Kind::kPoisson;
  double rate_qps_ = 1.0;  // requests per second (during on periods for onoff)
  double cv_ = 1.0;
  double on_s_ = 0.0;     // seconds
  double off_s_ = 0.0;    // seconds
  double clock_s_ = 0.0;  // last arrival; for onoff, the "on-time" elapsed
  bool started_ = false;
};

}  // namespace servesim
