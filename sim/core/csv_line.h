// Small CSV and number-parsing helpers shared by the trace reader, the empirical
// distribution and the sweep/plan writers: split one line into fields, quote one field (RFC 4180
// quoting without embedded newlines), and locale-independent, strict number parsing
// (std::from_chars: the whole field must be the number). Stateless; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace servesim {

// Splits `line` (without its newline; a trailing '\r' is dropped) into `fields`, which view
// into `line` or, for quoted fields with doubled quotes, into `scratch`. Leading and
// trailing blanks around a field are trimmed.
void split_csv_line(std::string_view line, std::vector<std::string_view>& fields,
                    std::vector<std::string>& scratch);

// True and the value when the whole (trimmed) field is a number / integer.
bool parse_double(std::string_view field, double& value);
bool parse_int64(std::string_view field, int64_t& value);

std::string_view trim(std::string_view text);

// The field as a CSV writer must emit it: unchanged, or quoted (with doubled quotes) when it
// holds a comma, a quote or a newline. The inverse of split_csv_line for one field.
std::string csv_escape(const std::string& field);

// Shortest decimal text that reads back as `value` ("2", "0.25", "-1e-07").
std::string format_number(double value);

// Resolves `path` against `base_dir` unless it is absolute or base_dir is empty.
std::string resolve_path(const std::string& path, const std::string& base_dir);

}  // namespace servesim
