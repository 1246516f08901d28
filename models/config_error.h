// ConfigError: the one exception type servesim throws for bad user input (a malformed or
// inconsistent config, an unknown name, a deployment that cannot work).
//
// Contract: what() is a single line that names the offending field and, where one exists,
// the fix. Front ends print it as "error: <what>" and exit non-zero; nothing else is lost.
// Programming errors (broken invariants) are not ConfigErrors.
#pragma once

#include <stdexcept>
#include <string>

namespace servesim {

class ConfigError : public std::runtime_error {
 public:
  explicit ConfigError(const std::string& message) : std::runtime_error(message) {}
};

}  // namespace servesim
