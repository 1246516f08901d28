#include "serve/loadtest/prometheus_text.h"

#include <algorithm>
#include <cmath>

#include "sim/core/csv_line.h"

namespace servesim {
namespace {

bool parse_value(std::string_view text, double& value) {
  text = trim(text);
  const size_t space = text.find_first_of(" \t");
  if (space != std::string_view::npos) text = text.substr(0, space);  // drop the timestamp
  if (text == "+Inf" || text == "Inf")
    value = INFINITY;
  else if (text == "-Inf")
    value = -INFINITY;
  else if (text == "NaN")
    value = NAN;
  else
    return parse_double(text, value);
  return true;
}

// The exposition format's metric names: [a-zA-Z_:][a-zA-Z0-9_:]*.
bool metric_name(std::string_view name) {
  auto letter = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':';
  };
  if (name.empty() || !letter(name.front())) return false;
  return std::all_of(name.begin(), name.end(),
                     [&](char c) { return letter(c) || (c >= '0' && c <= '9'); });
}

bool parse_line(std::string_view line, PromSample& sample) {
  const size_t name_end = line.find_first_of("{ \t");
  if (name_end == std::string_view::npos || !metric_name(line.substr(0, name_end))) return false;
  sample.name = std::string(line.substr(0, name_end));
  std::string_view rest = line.substr(name_end);
  sample.labels.clear();
  if (rest.starts_with("{")) {
    const size_t close = rest.rfind('}');
    if (close == std::string_view::npos) return false;
    sample.labels = std::string(rest.substr(1, close - 1));
    rest = rest.substr(close + 1);
  }
  return parse_value(rest, sample.value);
}

}  // namespace

PromScrape parse_prometheus_text(std::string_view text) {
  PromScrape scrape;
  while (!text.empty()) {
    const size_t end = text.find('\n');
    const std::string_view line = trim(text.substr(0, end));
    text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
    if (line.empty() || line.front() == '#') continue;
    PromSample sample;
    if (!parse_line(line, sample)) {
      ++scrape.skipped;
    } else if (!sample.name.ends_with("_bucket")) {
      scrape.samples.push_back(std::move(sample));
    }
  }
  return scrape;
}

bool prom_sum(const std::vector<PromSample>& samples, std::string_view name, double& sum) {
  bool found = false;
  sum = 0;
  for (const PromSample& s : samples) {
    if (s.name != name) continue;
    sum += s.value;
    found = true;
  }
  return found;
}

}  // namespace servesim
