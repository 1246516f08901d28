#include "sim/core/csv_line.h"

#include <charconv>
#include <filesystem>

namespace servesim {

std::string_view trim(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t' || text.back() == '\r')) {
    text.remove_suffix(1);
  }
  return text;
}

void split_csv_line(std::string_view line, std::vector<std::string_view>& fields,
                    std::vector<std::string>& scratch) {
  fields.clear();
  scratch.clear();
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  // Views into scratch must stay valid while it grows.
  scratch.reserve(line.size() / 2 + 1);
  size_t i = 0;
  for (;;) {
    std::string_view rest = line.substr(i);
    const size_t lead = rest.find_first_not_of(" \t");
    if (lead != std::string_view::npos && rest[lead] == '"') {
      size_t j = i + lead + 1;
      std::string unquoted;
      bool had_escape = false;
      while (j < line.size()) {
        if (line[j] == '"') {
          if (j + 1 < line.size() && line[j + 1] == '"') {
            unquoted += '"';
            had_escape = true;
            j += 2;
            continue;
          }
          break;
        }
        unquoted += line[j++];
      }
      const size_t start = i + lead + 1;
      if (had_escape) {
        scratch.push_back(std::move(unquoted));
        fields.push_back(scratch.back());
      } else {
        fields.push_back(line.substr(start, j - start));
      }
      const size_t comma = line.find(',', j);
      if (comma == std::string_view::npos) return;
      i = comma + 1;
      continue;
    }
    const size_t comma = line.find(',', i);
    if (comma == std::string_view::npos) {
      fields.push_back(trim(line.substr(i)));
      return;
    }
    fields.push_back(trim(line.substr(i, comma - i)));
    i = comma + 1;
  }
}

bool parse_double(std::string_view field, double& value) {
  field = trim(field);
  if (!field.empty() && field.front() == '+') field.remove_prefix(1);
  if (field.empty()) return false;
  const auto [end, ec] = std::from_chars(field.data(), field.data() + field.size(), value);
  return ec == std::errc() && end == field.data() + field.size();
}

bool parse_int64(std::string_view field, int64_t& value) {
  field = trim(field);
  if (!field.empty() && field.front() == '+') field.remove_prefix(1);
  if (field.empty()) return false;
  const auto [end, ec] = std::from_chars(field.data(), field.data() + field.size(), value);
  return ec == std::errc() && end == field.data() + field.size();
}

std::string format_number(double value) {
  char buffer[32];
  const auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, value);
  return ec == std::errc() ? std::string(buffer, end) : std::string("?");
}

std::string resolve_path(const std::string& path, const std::string& base_dir) {
  const std::filesystem::path p(path);
  if (p.is_absolute() || base_dir.empty()) return path;
  return (std::filesystem::path(base_dir) / p).string();
}

std::string csv_escape(const std::string& field) {
  if (field.find_first_of(",\"\n") == std::string::npos) return field;
  std::string out = "\"";
  for (char ch : field) {
    if (ch == '"') out += '"';
    out += ch;
  }
  return out + "\"";
}

}  // namespace servesim
