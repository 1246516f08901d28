#include "cli/size_parse.h"

#include <cctype>
#include <cmath>
#include <string>

#include "models/config_error.h"
#include "models/name_match.h"

namespace servesim {

int64_t parse_size_bytes(const std::string& text, const std::string& flag) {
  size_t pos = 0;
  double value = 0;
  try {
    value = std::stod(text, &pos);
  } catch (const std::exception&) {
    throw ConfigError(flag + ": expected a size such as 8GiB or 512MiB, got '" + text + "'");
  }
  const std::string unit = lower(text.substr(pos));
  double scale;
  if (unit.empty() || unit == "b") {
    scale = 1;
  } else if (unit == "k" || unit == "kib" || unit == "kb") {
    scale = 1024.0;
  } else if (unit == "m" || unit == "mib" || unit == "mb") {
    scale = 1024.0 * 1024;
  } else if (unit == "g" || unit == "gib" || unit == "gb") {
    scale = 1024.0 * 1024 * 1024;
  } else {
    throw ConfigError(flag + ": unknown unit '" + text.substr(pos) + "'; use B, KiB, MiB or GiB");
  }
  const double bytes = value * scale;
  if (!std::isfinite(bytes) || bytes < 0 || bytes > 9e18) {
    throw ConfigError(flag + ": size must be between 0 and 9e18 bytes, got '" + text + "'");
  }
  return static_cast<int64_t>(std::llround(bytes));
}

}  // namespace servesim
