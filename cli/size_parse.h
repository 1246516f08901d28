// Parsing of memory sizes as users write them on the command line: "8589934592", "8GiB",
// "8G", "512MiB", "0.5GiB". Binary units (GiB = 2^30 bytes). Stateless.
#pragma once

#include <cstdint>
#include <string>

namespace servesim {

// Throws ConfigError naming `flag` when `text` is not a non-negative size.
int64_t parse_size_bytes(const std::string& text, const std::string& flag);

}  // namespace servesim
