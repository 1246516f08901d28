#include "calibration/measured/timing_trace.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <optional>

#include "models/config_error.h"
#include "models/json_file.h"
#include "sim/core/csv_line.h"

namespace servesim {
namespace {

// Beyond this a latency or the span of the sends is a unit mistake (milliseconds or
// nanoseconds as seconds), and sums of such times overflow.
constexpr double kMaxSeconds = 1e9;  // 31 years

enum Column { kArrival, kFirstToken, kLastToken, kPromptTokens, kOutputTokens, kError, kColumns };

// Canonical name first, then the aliases (timing_trace.h lists them).
const std::array<std::vector<std::string>, kColumns>& column_names() {
  static const std::array<std::vector<std::string>, kColumns> names = {{
      {"arrival_s", "send_time", "send_s", "start_time", "arrival_time"},
      {"first_token_s", "first_token_time"},
      {"last_token_s", "last_token_time", "finish_s", "end_time"},
      {"prompt_tokens", "input_tokens", "prompt_len", "input_len"},
      {"output_tokens", "completion_tokens", "output_len"},
      {"error"},
  }};
  return names;
}

// One line's fields by column: numbers (nullopt where empty or null) and the error text.
struct RawRow {
  std::array<std::optional<double>, kColumns> number;
  std::string error;
};

[[noreturn]] void fail(const std::string& where, const std::string& what) {
  throw ConfigError(where + ": " + what);
}

// Which column a name is, or kColumns for one the reader ignores.
Column column_of(const std::string& name) {
  for (int c = 0; c < kColumns; ++c) {
    const auto& names = column_names()[static_cast<size_t>(c)];
    if (std::find(names.begin(), names.end(), name) != names.end()) return static_cast<Column>(c);
  }
  return kColumns;
}

int tokens_of(const RawRow& row, Column c, const std::string& where) {
  const double v = *row.number[c];
  if (!(v >= 0) || v != std::floor(v) || v > 1e8) {
    fail(where, column_names()[c].front() + " is " + format_number(v) +
                    ", expected a whole number of tokens >= 0");
  }
  return static_cast<int>(v);
}

MeasuredRequest request_of(const RawRow& row, const std::string& where) {
  auto required = [&](Column c) {
    if (!row.number[c]) fail(where, "no " + column_names()[c].front() + " (required)");
    return *row.number[c];
  };
  MeasuredRequest r;
  r.arrival_s = required(kArrival);
  required(kPromptTokens);
  r.prompt_tokens = tokens_of(row, kPromptTokens, where);
  r.ok = row.error.empty();
  if (!r.ok) return r;
  const double first = required(kFirstToken);
  const double last = required(kLastToken);
  required(kOutputTokens);
  r.output_tokens = tokens_of(row, kOutputTokens, where);
  if (first < r.arrival_s || last < first) {
    fail(where, first < r.arrival_s
                    ? "first_token_s " + format_number(first) + " is before arrival_s " +
                          format_number(r.arrival_s) + " (a negative latency)"
                    : "last_token_s " + format_number(last) + " is before first_token_s " +
                          format_number(first) + " (a negative latency)");
  }
  r.ttft_s = first - r.arrival_s;
  r.e2e_s = last - r.arrival_s;
  if (!(r.e2e_s <= kMaxSeconds)) {
    fail(where, "last_token_s " + format_number(last) + " is more than 1e9 s after arrival_s " +
                    format_number(r.arrival_s) + " (timestamps in seconds?)");
  }
  return r;
}

class CsvTraceReader {
 public:
  explicit CsvTraceReader(const std::string& path) : path_(path) {}

  // Each request with its line number.
  void read(std::ifstream& in, std::vector<std::pair<MeasuredRequest, size_t>>& out) {
    std::string line;
    if (!std::getline(in, line)) fail(path_, "empty, expected a header line");
    read_header(line);
    for (size_t n = 2; std::getline(in, line); ++n) {
      if (trim(line).empty()) continue;
      out.emplace_back(request_of(row(line, n), where(n)), n);
    }
  }

 private:
  std::string where(size_t line) const { return path_ + " line " + std::to_string(line); }

  void read_header(const std::string& line) {
    split_csv_line(line, fields_, scratch_);
    index_.fill(-1);
    for (size_t i = 0; i < fields_.size(); ++i) {
      const Column c = column_of(std::string(fields_[i]));
      if (c == kColumns) continue;
      if (index_[c] >= 0) {
        fail(where(1), "columns '" + std::string(fields_[static_cast<size_t>(index_[c])]) +
                           "' and '" + std::string(fields_[i]) + "' are the same; keep one");
      }
      index_[c] = static_cast<int>(i);
      names_[c] = std::string(fields_[i]);
    }
    width_ = fields_.size();
    for (Column c : {kArrival, kPromptTokens}) {
      if (index_[c] < 0) fail(where(1), "no column " + column_names()[c].front() + " (required)");
    }
  }

  RawRow row(const std::string& line, size_t n) {
    split_csv_line(line, fields_, scratch_);
    if (fields_.size() != width_) {
      fail(where(n), std::to_string(fields_.size()) + " fields where the header has " +
                         std::to_string(width_) + " (a truncated file?)");
    }
    RawRow row;
    for (int c = 0; c < kColumns; ++c) {
      if (index_[c] < 0) continue;
      const std::string_view field = fields_[static_cast<size_t>(index_[c])];
      if (c == kError) {
        row.error = std::string(field);
      } else if (!field.empty()) {
        double v = 0;
        if (!parse_double(field, v) || !std::isfinite(v)) {
          fail(where(n), "column " + names_[c] + ": '" + std::string(field) + "' is not a number");
        }
        row.number[c] = v;
      }
    }
    return row;
  }

  const std::string& path_;
  std::array<int, kColumns> index_{};
  std::array<std::string, kColumns> names_;
  size_t width_ = 0;
  std::vector<std::string_view> fields_;
  std::vector<std::string> scratch_;
};

RawRow json_row(const nlohmann::json& j, const std::string& where) {
  if (!j.is_object()) fail(where, "is not a JSON object");
  RawRow row;
  std::array<std::string, kColumns> seen;
  for (const auto& [key, value] : j.items()) {
    const Column c = column_of(key);
    if (c == kColumns) continue;
    if (!seen[c].empty()) fail(where, "keys '" + seen[c] + "' and '" + key + "' are the same");
    seen[c] = key;
    if (value.is_null()) continue;
    if (c == kError) {
      if (!value.is_string()) fail(where, key + " is " + value.dump() + ", expected text");
      row.error = value.get<std::string>();
    } else if (!value.is_number() || !std::isfinite(value.get<double>())) {
      fail(where, key + " is " + value.dump() + ", expected a number");
    } else {
      row.number[c] = value.get<double>();
    }
  }
  return row;
}

void read_jsonl(std::ifstream& in, const std::string& path,
                std::vector<std::pair<MeasuredRequest, size_t>>& out) {
  std::string line;
  for (size_t n = 1; std::getline(in, line); ++n) {
    if (trim(line).empty()) continue;
    const std::string where = path + " line " + std::to_string(n);
    out.emplace_back(request_of(json_row(parse_json_text(line, where), where), where), n);
  }
}

}  // namespace

MeasuredRun read_timing_trace(const std::string& path) {
  const std::string ext = std::filesystem::path(path).extension().string();
  if (ext != ".jsonl" && ext != ".csv") {
    fail(path, "a timing trace must be .jsonl or .csv, not '" + ext + "'");
  }
  std::ifstream in(path);
  if (!in) fail(path, "cannot open file");
  std::vector<std::pair<MeasuredRequest, size_t>> rows;  // with the line, for ties and errors
  if (ext == ".csv") {
    CsvTraceReader(path).read(in, rows);
  } else {
    read_jsonl(in, path, rows);
  }
  if (rows.empty()) fail(path, "no requests in the trace");
  std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) {
    return a.first.arrival_s != b.first.arrival_s ? a.first.arrival_s < b.first.arrival_s
                                                  : a.second < b.second;
  });
  MeasuredRun run;
  run.source = path;
  run.format = "trace";
  const double first_s = rows.front().first.arrival_s;
  for (auto& [request, line] : rows) {
    request.arrival_s -= first_s;
    if (!(request.arrival_s <= kMaxSeconds)) {
      fail(path + " line " + std::to_string(line),
           "arrival_s is " + format_number(request.arrival_s) +
               " s after the first send, beyond 1e9 s (timestamps in seconds?)");
    }
    run.requests.push_back(std::move(request));
  }
  run.summary = summary_of_requests(run.requests);
  return run;
}

}  // namespace servesim
