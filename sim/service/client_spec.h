// ClientSpec: how the simulated clients above the service path behave when an answer is slow
// or refused — a per-attempt timeout and a retry policy with capped exponential backoff and
// jitter — read from a scenario's "service.client" block:
//
//   "client": {"timeout_s": 30,
//              "retry": {"max_attempts": 4, "on": ["rate_limited", "queue_full"],
//                        "initial_backoff_s": 0.5, "max_backoff_s": 8, "multiplier": 2,
//                        "jitter": "full"},
//              "machine": {"threads": 1}}
//
// Backoff before retry k (k = 1 for the first retry) follows the AWS Architecture Blog's
// "Exponential Backoff And Jitter": cap_k = min(max_backoff_s, initial_backoff_s ×
// multiplier^(k-1)); "full" waits uniform(0, cap_k), "equal" cap_k/2 + uniform(0, cap_k/2),
// "none" exactly cap_k. Every policy stops: max_attempts is bounded and the backoff positive.
// "machine" is the load generator's CPU (client_machine_spec.h); absent, the client is ideal.
// Parsing is strict and throws ConfigError naming the key and the fix. Immutable after
// parsing; safe to share.
#pragma once

#include <array>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "sim/core/request_record.h"
#include "sim/core/rng.h"
#include "sim/service/client_machine_spec.h"

namespace servesim {

enum class Jitter : uint8_t { kFull, kEqual, kNone };

struct RetrySpec {
  // Attempts in all, the first included; 1 = never retry. At most kMaxAttempts.
  static constexpr int kMaxAttempts = 100;

  int max_attempts = 1;                      // "max_attempts", required in a "retry" block
  std::array<bool, kNumFailureCauses> on{};  // by FailureCause; default: the three retryable
  double initial_backoff_s = 0;              // seconds, the first retry's cap. > 0 with retries
  double max_backoff_s = 0;                  // seconds, the largest cap; default initial_backoff_s
  double multiplier = 2;                     // growth of the cap per retry. >= 1
  Jitter jitter = Jitter::kFull;

  bool retries(FailureCause cause) const { return on[static_cast<size_t>(cause)]; }
  // The cap of retry k (k >= 1), seconds.
  double cap_s(int k) const;
  // The wait before retry k, seconds, drawing its jitter from `rng`.
  double backoff_s(int k, Rng& rng) const;
};

struct ClientSpec {
  double timeout_s = 0;  // seconds from an attempt's send to its last token; 0 = never
  RetrySpec retry;       // max_attempts 1 without a "retry" block
  std::optional<ClientMachineSpec> machine;  // the load generator's CPU; none: ideal

  bool enabled() const { return timeout_s > 0 || retry.max_attempts > 1; }

  // `context` prefixes messages ("scenario.json: service.client"); `base_dir` resolves the
  // machine's distribution files. Throws ConfigError.
  static ClientSpec from_json(const nlohmann::json& j, const std::string& context,
                              const std::string& base_dir = "");
};

}  // namespace servesim
