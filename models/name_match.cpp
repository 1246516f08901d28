#include "models/name_match.h"

#include <algorithm>
#include <cctype>

namespace servesim {
std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

int edit_distance(std::string_view a_in, std::string_view b_in) {
  const std::string a = lower(a_in);
  const std::string b = lower(b_in);
  std::vector<int> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = static_cast<int>(j);
  for (size_t i = 1; i <= a.size(); ++i) {
    int diagonal = row[0];
    row[0] = static_cast<int>(i);
    for (size_t j = 1; j <= b.size(); ++j) {
      const int above = row[j];
      const int substitution = diagonal + (a[i - 1] == b[j - 1] ? 0 : 1);
      row[j] = std::min({above + 1, row[j - 1] + 1, substitution});
      diagonal = above;
    }
  }
  return row[b.size()];
}

std::vector<std::string> closest_names(std::string_view name,
                                       const std::vector<std::string>& candidates,
                                       size_t max_results) {
  const std::string needle = lower(name);
  struct Scored {
    int score;
    std::string name;
  };
  std::vector<Scored> scored;
  for (const std::string& candidate : candidates) {
    const std::string hay = lower(candidate);
    int score;
    if (!needle.empty() &&
        (hay.find(needle) != std::string::npos || needle.find(hay) != std::string::npos)) {
      score = 0;
    } else {
      score = edit_distance(needle, hay);
      // A suggestion that needs more edits than half the name is noise, not help.
      if (score > static_cast<int>(std::max<size_t>(2, needle.size() / 2))) continue;
    }
    scored.push_back({score, candidate});
  }
  std::stable_sort(scored.begin(), scored.end(),
                   [](const Scored& x, const Scored& y) { return x.score < y.score; });
  std::vector<std::string> out;
  for (size_t i = 0; i < scored.size() && i < max_results; ++i) out.push_back(scored[i].name);
  return out;
}

std::string did_you_mean(std::string_view name, const std::vector<std::string>& candidates) {
  const std::vector<std::string> close = closest_names(name, candidates);
  if (close.empty()) return "";
  std::string out = " (did you mean ";
  for (size_t i = 0; i < close.size(); ++i) {
    if (i > 0) out += ", ";
    out += "'" + close[i] + "'";
  }
  return out + "?)";
}

}  // namespace servesim
