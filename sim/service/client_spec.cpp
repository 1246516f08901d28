#include "sim/service/client_spec.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "models/config_error.h"
#include "models/json_object_reader.h"

namespace servesim {
namespace {

bool finite_at_least(double v, double lo) {
  return v >= lo && v != std::numeric_limits<double>::infinity();
}

// The failures a client can sensibly retry; a 400 (too_long) would fail again.
constexpr FailureCause kRetryable[] = {FailureCause::kRateLimited, FailureCause::kQueueFull,
                                       FailureCause::kTimedOut};

void read_retry_on(JsonObjectReader& r, RetrySpec& retry) {
  const nlohmann::json& on = r.raw("on");
  if (on.is_null()) {
    for (FailureCause c : kRetryable) retry.on[static_cast<size_t>(c)] = true;
    return;
  }
  if (!on.is_array() || on.empty()) {
    r.fail("on", "must be a non-empty list of \"rate_limited\", \"queue_full\", \"timed_out\"");
  }
  for (const nlohmann::json& name : on) {
    const auto it = std::find_if(std::begin(kRetryable), std::end(kRetryable), [&](auto c) {
      return name.is_string() && name.get<std::string>() == to_string(c);
    });
    if (it == std::end(kRetryable)) {
      r.fail("on", "has " + name.dump() +
                       "; each entry must be \"rate_limited\", \"queue_full\" or \"timed_out\"");
    }
    retry.on[static_cast<size_t>(*it)] = true;
  }
}

Jitter read_jitter(JsonObjectReader& r) {
  const std::string name = r.optional<std::string>("jitter", "full");
  if (name == "full") return Jitter::kFull;
  if (name == "equal") return Jitter::kEqual;
  if (name == "none") return Jitter::kNone;
  r.fail("jitter", "must be \"full\", \"equal\" or \"none\", got \"" + name + "\"");
}

// Every key is read (and a misspelt one named) before the values are checked.
RetrySpec read_retry(JsonObjectReader& r) {
  RetrySpec retry;
  retry.max_attempts = r.required<int>("max_attempts");
  read_retry_on(r, retry);
  retry.initial_backoff_s = r.optional<double>("initial_backoff_s", 0.0);
  const bool has_cap = r.has("max_backoff_s");
  retry.max_backoff_s = r.optional<double>("max_backoff_s", 0.0);
  retry.multiplier = r.optional<double>("multiplier", 2.0);
  retry.jitter = read_jitter(r);
  r.finish();
  if (retry.max_attempts < 1 || retry.max_attempts > RetrySpec::kMaxAttempts) {
    r.fail("max_attempts", "must be between 1 and " + std::to_string(RetrySpec::kMaxAttempts) +
                               " (attempts in all, the first included; unbounded is refused)");
  }
  if (!finite_at_least(retry.initial_backoff_s, 0) ||
      (retry.max_attempts > 1 && retry.initial_backoff_s == 0)) {
    r.fail("initial_backoff_s",
           "must be a finite number of seconds > 0 with retries (0 retries in the same instant)");
  }
  if (!has_cap) retry.max_backoff_s = retry.initial_backoff_s;
  if (!finite_at_least(retry.max_backoff_s, retry.initial_backoff_s)) {
    r.fail("max_backoff_s", "must be a finite number >= initial_backoff_s");
  }
  if (!finite_at_least(retry.multiplier, 1)) {
    r.fail("multiplier", "must be a finite number >= 1 (the cap may not shrink)");
  }
  return retry;
}

}  // namespace

double RetrySpec::cap_s(int k) const {
  // The exponent is bounded by kMaxAttempts, so the product stays finite before the min.
  return std::min(max_backoff_s, initial_backoff_s * std::pow(multiplier, k - 1));
}

double RetrySpec::backoff_s(int k, Rng& rng) const {
  const double cap = cap_s(k);
  switch (jitter) {
    case Jitter::kFull:
      return cap * rng.uniform();
    case Jitter::kEqual:
      return 0.5 * cap + 0.5 * cap * rng.uniform();
    case Jitter::kNone:
      return cap;
  }
  return cap;
}

ClientSpec ClientSpec::from_json(const nlohmann::json& j, const std::string& context,
                                 const std::string& base_dir) {
  if (!j.is_object()) throw ConfigError(context + ": must be an object, got " + j.dump());
  JsonObjectReader r(j, context);
  ClientSpec c;
  c.timeout_s = r.optional<double>("timeout_s", 0.0);
  if (!finite_at_least(c.timeout_s, 0)) {
    r.fail("timeout_s", "must be a finite number of seconds >= 0 (0: never time out)");
  }
  const nlohmann::json& retry = r.raw("retry");
  if (!retry.is_null()) {
    if (!retry.is_object()) r.fail("retry", "must be an object with \"max_attempts\"");
    JsonObjectReader rr(retry, context + ".retry");
    c.retry = read_retry(rr);
  }
  const nlohmann::json& machine = r.raw("machine");
  if (!machine.is_null()) {
    c.machine = ClientMachineSpec::from_json(machine, context + ".machine", base_dir);
  }
  r.finish();
  return c;
}

}  // namespace servesim
