// Helpers for the names users type: case folding, and turning a misspelt name into a useful
// suggestion ("did you mean ..."). Stateless; thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace servesim {

// `s` in ASCII lower case (names and units are ASCII; other bytes are kept).
std::string lower(std::string_view s);

// Case-insensitive Levenshtein distance.
int edit_distance(std::string_view a, std::string_view b);

// Up to `max_results` candidates closest to `name` (case-insensitive edit distance, with
// substring matches ranked first), closest first. Empty when nothing is reasonably close.
std::vector<std::string> closest_names(std::string_view name,
                                       const std::vector<std::string>& candidates,
                                       size_t max_results = 3);

// " (did you mean 'a', 'b'?)" or "" when there is nothing to suggest.
std::string did_you_mean(std::string_view name, const std::vector<std::string>& candidates);

}  // namespace servesim
