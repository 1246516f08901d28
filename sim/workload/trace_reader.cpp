#include "sim/workload/trace_reader.h"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "models/config_error.h"
#include "models/name_match.h"
#include "sim/core/csv_line.h"

namespace servesim {

namespace {

// Days since 1970-01-01 of a proleptic Gregorian date (the era/day-of-era method).
int64_t days_from_civil(int64_t y, int64_t m, int64_t d) {
  y -= m <= 2 ? 1 : 0;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const int64_t yoe = y - era * 400;
  const int64_t doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
  const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

bool read_digits(std::string_view s, size_t& i, size_t count, int64_t& value) {
  if (i + count > s.size()) return false;
  value = 0;
  for (size_t k = 0; k < count; ++k) {
    const char c = s[i + k];
    if (c < '0' || c > '9') return false;
    value = value * 10 + (c - '0');
  }
  i += count;
  return true;
}

bool expect(std::string_view s, size_t& i, char c) {
  if (i >= s.size() || s[i] != c) return false;
  ++i;
  return true;
}

// "YYYY-MM-DD HH:MM:SS[.fraction][Z|+HH:MM|-HH:MM]" (a 'T' may replace the space) to
// seconds since 2000-01-01 UTC; keeping the epoch recent keeps sub-microsecond resolution.
bool parse_datetime(std::string_view s, double& seconds) {
  s = trim(s);
  size_t i = 0;
  int64_t y, mo, d, h, mi, sec;
  if (!read_digits(s, i, 4, y) || !expect(s, i, '-') || !read_digits(s, i, 2, mo) ||
      !expect(s, i, '-') || !read_digits(s, i, 2, d)) {
    return false;
  }
  if (i >= s.size() || (s[i] != ' ' && s[i] != 'T')) return false;
  ++i;
  if (!read_digits(s, i, 2, h) || !expect(s, i, ':') || !read_digits(s, i, 2, mi) ||
      !expect(s, i, ':') || !read_digits(s, i, 2, sec)) {
    return false;
  }
  if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || sec > 60) return false;
  double fraction = 0.0;
  if (i < s.size() && s[i] == '.') {
    ++i;
    double scale = 0.1;
    const size_t start = i;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') {
      fraction += (s[i] - '0') * scale;
      scale /= 10.0;
      ++i;
    }
    if (i == start) return false;
  }
  int64_t offset_s = 0;
  if (i < s.size() && s[i] == 'Z') {
    ++i;
  } else if (i < s.size() && (s[i] == '+' || s[i] == '-')) {
    const int64_t sign = s[i] == '+' ? 1 : -1;
    ++i;
    int64_t oh, om;
    if (!read_digits(s, i, 2, oh) || !expect(s, i, ':') || !read_digits(s, i, 2, om)) {
      return false;
    }
    offset_s = sign * (oh * 3600 + om * 60);
  }
  if (i != s.size()) return false;
  const int64_t days = days_from_civil(y, mo, d) - days_from_civil(2000, 1, 1);
  seconds = static_cast<double>(days * 86400 + h * 3600 + mi * 60 + sec - offset_s) + fraction;
  return true;
}

struct Layout {
  TraceFormat format;
  const char* time;
  const char* prompt;
  const char* output;
};

constexpr Layout kLayouts[] = {
    {TraceFormat::kAzure, "TIMESTAMP", "ContextTokens", "GeneratedTokens"},
    {TraceFormat::kBurstGpt, "Timestamp", "Request tokens", "Response tokens"},
    {TraceFormat::kSplitwise, "arrived_at", "num_prefill_tokens", "num_decode_tokens"},
};

}  // namespace

std::string_view to_string(TraceFormat format) {
  switch (format) {
    case TraceFormat::kAuto:
      return "auto";
    case TraceFormat::kAzure:
      return "azure";
    case TraceFormat::kBurstGpt:
      return "burstgpt";
    case TraceFormat::kSplitwise:
      return "splitwise";
    case TraceFormat::kMooncake:
      return "mooncake";
  }
  return "unknown";
}

TraceFormat trace_format_from_string(std::string_view name) {
  for (TraceFormat f : {TraceFormat::kAuto, TraceFormat::kAzure, TraceFormat::kBurstGpt,
                        TraceFormat::kSplitwise, TraceFormat::kMooncake}) {
    if (name == to_string(f)) return f;
  }
  throw ConfigError("trace.format: unknown format '" + std::string(name) + "'" +
                    did_you_mean(name, {"auto", "azure", "burstgpt", "splitwise", "mooncake"}));
}

TraceReader::TraceReader(const std::string& path, const TraceOptions& options)
    : path_(path), options_(options), in_(path) {
  if (!in_) throw ConfigError(path + ": cannot open trace file");
  if (!(options.time_scale > 0.0) || !std::isfinite(options.time_scale)) {
    throw ConfigError("trace.time_scale: must be > 0, got " + format_number(options.time_scale));
  }
  std::string header;
  do {
    if (!std::getline(in_, header)) throw ConfigError(path + ": empty trace file");
    ++line_;
  } while (trim(header).empty());
  if (trim(header).front() == '{') {
    if (options.format != TraceFormat::kAuto && options.format != TraceFormat::kMooncake) {
      throw ConfigError(path + ": looks like JSONL (Mooncake) but trace.format is '" +
                        std::string(to_string(options.format)) + "'");
    }
    format_ = TraceFormat::kMooncake;
    pending_first_line_ = header;
    has_pending_first_line_ = true;
    return;
  }
  if (options.format == TraceFormat::kMooncake) {
    throw ConfigError(path + ":1: trace.format is 'mooncake' but the file is not JSONL");
  }
  std::vector<std::string> scratch;
  split_csv_line(header, fields_, scratch);
  std::vector<std::string> names(fields_.begin(), fields_.end());
  num_cols_ = names.size();
  auto column = [&](const char* name) {
    const auto it = std::find(names.begin(), names.end(), name);
    return it == names.end() ? -1 : static_cast<int>(it - names.begin());
  };
  for (const Layout& layout : kLayouts) {
    const bool wanted = options.format == layout.format;
    const bool fits =
        column(layout.time) >= 0 && column(layout.prompt) >= 0 && column(layout.output) >= 0;
    if (wanted && !fits) {
      for (const char* name : {layout.time, layout.prompt, layout.output}) {
        if (column(name) < 0) {
          throw ConfigError(path + ":1: " + std::string(to_string(layout.format)) +
                            " trace has no column '" + name + "'" + did_you_mean(name, names));
        }
      }
    }
    if ((wanted || options.format == TraceFormat::kAuto) && fits) {
      format_ = layout.format;
      time_col_ = column(layout.time);
      prompt_col_ = column(layout.prompt);
      output_col_ = column(layout.output);
      time_name_ = layout.time;
      prompt_name_ = layout.prompt;
      output_name_ = layout.output;
      return;
    }
  }
  throw ConfigError(path +
                    ":1: unrecognised trace header; expected Azure "
                    "(TIMESTAMP,ContextTokens,GeneratedTokens), BurstGPT (Timestamp,...,"
                    "Request tokens,Response tokens,...), Splitwise (arrived_at,"
                    "num_prefill_tokens,num_decode_tokens) or Mooncake JSONL");
}

void TraceReader::fail(const std::string& column, const std::string& what) const {
  throw ConfigError(path_ + ":" + std::to_string(line_) + ": " + column + ": " + what);
}

bool TraceReader::next(TraceRow& row) {
  for (;;) {
    const bool got = format_ == TraceFormat::kMooncake ? next_jsonl(row) : next_csv(row);
    if (!got) return false;
    row.line = line_;
    if (row.output_tokens == 0 && options_.skip_zero_output) continue;
    return true;
  }
}

bool TraceReader::next_csv(TraceRow& row) {
  do {
    if (!std::getline(in_, line_text_)) return false;
    ++line_;
  } while (trim(line_text_).empty());
  std::vector<std::string> scratch;
  split_csv_line(line_text_, fields_, scratch);
  if (fields_.size() != num_cols_) {
    fail(time_name_, "expected " + std::to_string(num_cols_) + " columns as in the header, got " +
                         std::to_string(fields_.size()));
  }
  double t = 0.0;
  const std::string_view time_text = fields_[static_cast<size_t>(time_col_)];
  const bool time_ok =
      format_ == TraceFormat::kAzure ? parse_datetime(time_text, t) : parse_double(time_text, t);
  if (!time_ok || !std::isfinite(t)) {
    fail(time_name_, std::string(format_ == TraceFormat::kAzure
                                     ? "expected a date-time like 2023-11-16 18:15:46.6805900"
                                     : "expected a number of seconds") +
                         ", got '" + std::string(time_text) + "'");
  }
  auto tokens = [&](int col, const std::string& name) {
    int64_t v = 0;
    const std::string_view text = fields_[static_cast<size_t>(col)];
    if (!parse_int64(text, v) || v < 0 || v > 100'000'000) {
      fail(name, "expected a non-negative integer, got '" + std::string(text) + "'");
    }
    return static_cast<int>(v);
  };
  row.prompt_tokens = tokens(prompt_col_, prompt_name_);
  row.output_tokens = tokens(output_col_, output_name_);
  row.block_hashes.clear();
  if (!have_first_) {
    first_time_s_ = t;
    last_time_s_ = t;
    have_first_ = true;
  }
  if (t < last_time_s_) {
    fail(time_name_, "time goes backwards (" + std::string(time_text) +
                         " is before the row above); sort the trace by time");
  }
  last_time_s_ = t;
  row.arrival_s = (t - first_time_s_) * options_.time_scale;
  return true;
}

bool TraceReader::next_jsonl(TraceRow& row) {
  if (has_pending_first_line_) {
    line_text_ = std::move(pending_first_line_);
    has_pending_first_line_ = false;
  } else {
    do {
      if (!std::getline(in_, line_text_)) return false;
      ++line_;
    } while (trim(line_text_).empty());
  }
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(line_text_);
  } catch (const nlohmann::json::exception& e) {
    // parse_error, or out_of_range for a number beyond a double ("1e400").
    fail("line", std::string("invalid JSON (") + e.what() + ")");
  }
  if (!j.is_object()) fail("line", "expected a JSON object, got " + j.dump());
  auto number = [&](const char* key) {
    const auto it = j.find(key);
    if (it == j.end()) fail(key, "missing");
    if (!it->is_number() || !(it->get<double>() >= 0.0)) {
      fail(key, "expected a non-negative number, got " + it->dump());
    }
    return it->get<double>();
  };
  auto tokens = [&](const char* key) {
    const auto it = j.find(key);
    if (it == j.end()) fail(key, "missing");
    if (!it->is_number_unsigned() || it->get<uint64_t>() > 100'000'000) {
      fail(key, "expected a non-negative integer, got " + it->dump());
    }
    return static_cast<int>(it->get<uint64_t>());
  };
  const double t = number("timestamp") / 1000.0;  // Mooncake timestamps are milliseconds
  row.prompt_tokens = tokens("input_length");
  row.output_tokens = tokens("output_length");
  row.block_hashes.clear();
  if (const auto it = j.find("hash_ids"); it != j.end()) {
    if (!it->is_array()) fail("hash_ids", "expected an array of integers, got " + it->dump());
    for (const auto& h : *it) {
      if (!h.is_number_unsigned()) fail("hash_ids", "expected integers, got " + h.dump());
      row.block_hashes.push_back(h.get<uint64_t>());
    }
  }
  if (!have_first_) {
    first_time_s_ = t;
    last_time_s_ = t;
    have_first_ = true;
  }
  if (t < last_time_s_) fail("timestamp", "time goes backwards; sort the trace by time");
  last_time_s_ = t;
  row.arrival_s = (t - first_time_s_) * options_.time_scale;
  return true;
}

}  // namespace servesim
