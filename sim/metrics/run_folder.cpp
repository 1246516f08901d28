#include "sim/metrics/run_folder.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>

#include "models/config_error.h"

namespace servesim {
namespace {

namespace fs = std::filesystem;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// summary.json's numbers (result_writer.cpp's summary_json), checked when present.
// Counts (metrics_summary() reads them as uint64_t); every other summary number below.
constexpr std::string_view kSummaryCounts[] = {"requests",      "completed",       "rejected",
                                               "timed_out",     "excluded_warmup", "input_tokens",
                                               "output_tokens", "preemptions"};
constexpr std::string_view kSummaryNumbers[] = {"duration_s",
                                                "request_throughput_per_s",
                                                "input_tokens_per_s",
                                                "output_tokens_per_s",
                                                "total_tokens_per_s",
                                                "output_tokens_per_s_per_gpu",
                                                "goodput_requests_per_s",
                                                "slo_attainment",
                                                "error_rate",
                                                "prefix_cache_hit_rate",
                                                "cost_per_million_output_tokens_usd",
                                                "cost_per_million_tokens_usd"};
constexpr std::string_view kLatencyObjects[] = {"ttft", "tpot", "itl", "e2e", "queueing"};
constexpr std::string_view kLatencyNumbers[] = {"mean_ms", "p50_ms", "p90_ms",
                                                "p95_ms",  "p99_ms", "max_ms"};

enum class ColumnKind { kInteger, kSeconds, kStatus };

// requests.csv's columns (ResultWriter's header) and how each is checked; others are ignored.
const std::map<std::string, ColumnKind, std::less<>>& known_columns() {
  static const std::map<std::string, ColumnKind, std::less<>> columns = {
      {"id", ColumnKind::kInteger},
      {"replica", ColumnKind::kInteger},
      {"status", ColumnKind::kStatus},
      {"arrival_s", ColumnKind::kSeconds},
      {"first_scheduled_s", ColumnKind::kSeconds},
      {"first_token_s", ColumnKind::kSeconds},
      {"finish_s", ColumnKind::kSeconds},
      {"prompt_tokens", ColumnKind::kInteger},
      {"output_tokens", ColumnKind::kInteger},
      {"cached_prompt_tokens", ColumnKind::kInteger},
      {"preemptions", ColumnKind::kInteger},
      {"queueing_s", ColumnKind::kSeconds},
      {"ttft_s", ColumnKind::kSeconds},
      {"tpot_s", ColumnKind::kSeconds},
      {"e2e_s", ColumnKind::kSeconds},
      {"step_index", ColumnKind::kInteger}};
  return columns;
}

constexpr std::string_view kRequiredColumns[] = {"id", "status", "ttft_s", "tpot_s", "e2e_s"};

void check_number(const nlohmann::json& parent, std::string_view key, const std::string& where) {
  const auto it = parent.find(key);
  if (it == parent.end() || it->is_null() || it->is_number()) return;
  throw ConfigError(where + std::string(key) + " is " + it->type_name() +
                    ", expected a number or null");
}

// A count must be a whole number >= 0 that fits uint64_t (nlohmann's unsigned), or absent or null:
// a negative or huge one cannot be cast to a count.
void check_count(const nlohmann::json& parent, std::string_view key, const std::string& where) {
  const auto it = parent.find(key);
  if (it == parent.end() || it->is_null() || it->is_number_unsigned()) return;
  const std::string got = it->is_number() ? it->dump() : std::string(it->type_name());
  throw ConfigError(where + std::string(key) + " is " + got +
                    ", expected a whole number >= 0 or null");
}

nlohmann::json read_summary(const fs::path& file) {
  std::ifstream in(file);
  if (!in) {
    throw ConfigError(file.string() +
                      ": missing or unreadable — not a result folder (simulate, engine run and "
                      "loadtest write one with --out)");
  }
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    // parse_error, or out_of_range for a number beyond a double (1e400): both bad input.
    throw ConfigError(file.string() + ": not valid JSON: " + e.what());
  }
  if (!j.is_object() || !j.contains("summary") || !j["summary"].is_object()) {
    throw ConfigError(file.string() + ": no \"summary\" object — not a servesim summary.json");
  }
  const std::string where = file.string() + ": summary.";
  const nlohmann::json& s = j["summary"];
  for (std::string_view key : kSummaryCounts) check_count(s, key, where);
  for (std::string_view key : kSummaryNumbers) check_number(s, key, where);
  for (std::string_view key : kLatencyObjects) {
    const auto it = s.find(key);
    if (it == s.end() || it->is_null()) continue;
    if (!it->is_object()) {
      throw ConfigError(where + std::string(key) + " is " + it->type_name() +
                        ", expected an object or null");
    }
    check_count(*it, "count", where + std::string(key) + ".");
    for (std::string_view stat : kLatencyNumbers) {
      check_number(*it, stat, where + std::string(key) + ".");
    }
  }
  return j;
}

std::vector<std::string_view> split_fields(std::string_view line) {
  std::vector<std::string_view> fields;
  size_t start = 0;
  while (true) {
    const size_t comma = line.find(',', start);
    fields.push_back(line.substr(start, comma - start));
    if (comma == std::string_view::npos) return fields;
    start = comma + 1;
  }
}

// Reads requests.csv line by line; `fail` names the file, line and column.
class RequestsCsvReader {
 public:
  RequestsCsvReader(fs::path file, RunFolder& run) : file_(std::move(file)), run_(run) {}

  void read() {
    std::ifstream in(file_);
    if (!in) {
      throw ConfigError(file_.string() +
                        ": missing or unreadable — not a result folder (simulate, engine run and "
                        "loadtest write one with --out)");
    }
    std::string line;
    if (!next_line(in, line)) throw ConfigError(file_.string() + ": empty, expected a header line");
    read_header(line);
    while (next_line(in, line)) read_row(line);
  }

 private:
  bool next_line(std::ifstream& in, std::string& line) {
    if (!std::getline(in, line)) return false;
    ++line_number_;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    return true;
  }

  [[noreturn]] void fail(size_t column, const std::string& what) const {
    std::string where = file_.string() + " line " + std::to_string(line_number_);
    if (column < header_.size()) {
      where += ", column " + std::to_string(column + 1) + " (" + header_[column] + ")";
    }
    throw ConfigError(where + ": " + what);
  }

  void read_header(const std::string& line) {
    for (std::string_view name : split_fields(line)) header_.emplace_back(name);
    for (size_t c = 0; c < header_.size(); ++c) {
      if (std::find(header_.begin(), header_.begin() + c, header_[c]) != header_.begin() + c) {
        fail(c, "column '" + header_[c] + "' appears twice");
      }
    }
    for (std::string_view name : kRequiredColumns) {
      const auto it = std::find(header_.begin(), header_.end(), name);
      if (it == header_.end()) {
        fail(header_.size(),
             "no column '" + std::string(name) + "' in the header — not a servesim requests.csv");
      }
    }
    auto index = [this](std::string_view name) {
      return static_cast<size_t>(std::find(header_.begin(), header_.end(), name) - header_.begin());
    };
    status_ = index("status");
    ttft_ = index("ttft_s");
    tpot_ = index("tpot_s");
    e2e_ = index("e2e_s");
  }

  double seconds(size_t column, std::string_view field) const {
    if (field.empty()) return kNaN;  // a time that never happened
    double v = 0.0;
    const auto [end, ec] = std::from_chars(field.data(), field.data() + field.size(), v);
    if (ec != std::errc() || end != field.data() + field.size() || !std::isfinite(v)) {
      fail(column, "'" + std::string(field) + "' is not a number of seconds");
    }
    return v;
  }

  void check_integer(size_t column, std::string_view field) const {
    long long v = 0;
    const auto [end, ec] = std::from_chars(field.data(), field.data() + field.size(), v);
    if (field.empty() || ec != std::errc() || end != field.data() + field.size()) {
      fail(column, "'" + std::string(field) + "' is not an integer");
    }
  }

  void check_field(size_t column, std::string_view field) const {
    const auto it = known_columns().find(header_[column]);
    if (it == known_columns().end()) return;
    switch (it->second) {
      case ColumnKind::kInteger:
        check_integer(column, field);
        break;
      case ColumnKind::kSeconds:
        seconds(column, field);
        break;
      case ColumnKind::kStatus:
        if (field != "ok" && field != "rejected" && field != "timed_out") {
          fail(column, "unknown status '" + std::string(field) + "' (ok, rejected or timed_out)");
        }
        break;
    }
  }

  // An ok request's latency: present and not negative (TPOT may be absent: one output token).
  double latency(size_t column, std::string_view field, bool required) const {
    const double v = seconds(column, field);
    if (std::isnan(v) && required) fail(column, "empty for a request with status ok");
    if (v < 0) fail(column, "negative latency " + std::string(field));
    return v;
  }

  void read_row(const std::string& line) {
    const std::vector<std::string_view> fields = split_fields(line);
    if (fields.size() != header_.size()) {
      fail(header_.size(), std::to_string(fields.size()) + " fields where the header has " +
                               std::to_string(header_.size()) + " (a truncated file?)");
    }
    for (size_t c = 0; c < fields.size(); ++c) check_field(c, fields[c]);
    ++run_.records;
    if (fields[status_] != "ok") return;
    ++run_.ok;
    run_.ttft_s.push_back(latency(ttft_, fields[ttft_], true));
    run_.e2e_s.push_back(latency(e2e_, fields[e2e_], true));
    const double tpot = latency(tpot_, fields[tpot_], false);
    if (!std::isnan(tpot)) run_.tpot_s.push_back(tpot);
  }

  fs::path file_;
  RunFolder& run_;
  std::vector<std::string> header_;
  size_t line_number_ = 0;
  size_t status_ = 0;
  size_t ttft_ = 0;
  size_t tpot_ = 0;
  size_t e2e_ = 0;
};

// The node at `key` (nested keys joined by '.'), or null when a part is absent.
const nlohmann::json* find_key(const nlohmann::json& root, std::string_view key) {
  const nlohmann::json* node = &root;
  while (!key.empty()) {
    const size_t dot = key.find('.');
    const std::string_view part = key.substr(0, dot);
    if (!node->is_object()) return nullptr;
    const auto it = node->find(part);
    if (it == node->end()) return nullptr;
    node = &*it;
    key = dot == std::string_view::npos ? std::string_view() : key.substr(dot + 1);
  }
  return node;
}

// A count read as it was written: through a double, 2^64 - 1 would round beyond uint64_t.
uint64_t count_of(const nlohmann::json& root, std::string_view key) {
  const nlohmann::json* node = find_key(root, key);
  return node != nullptr && node->is_number_unsigned() ? node->get<uint64_t>() : 0;
}

LatencyStats latency_stats(const RunFolder& run, const std::string& name) {
  LatencyStats s;
  s.count = count_of(run.summary, name + ".count");
  s.mean_s = run.value(name + ".mean_ms") / 1e3;
  s.p50_s = run.value(name + ".p50_ms") / 1e3;
  s.p90_s = run.value(name + ".p90_ms") / 1e3;
  s.p95_s = run.value(name + ".p95_ms") / 1e3;
  s.p99_s = run.value(name + ".p99_ms") / 1e3;
  s.max_s = run.value(name + ".max_ms") / 1e3;
  return s;
}

}  // namespace

double RunFolder::value(std::string_view key) const {
  const nlohmann::json* node = find_key(summary, key);
  return node != nullptr && node->is_number() ? node->get<double>() : kNaN;
}

std::string_view RunFolder::clock() const {
  return setup.contains("simulated_s") ? "simulated" : "measured";
}

MetricsSummary RunFolder::metrics_summary() const {
  auto count = [this](std::string_view key) { return count_of(summary, key); };
  MetricsSummary m;
  m.requests = count("requests");
  m.completed = count("completed");
  m.rejected = count("rejected");
  m.timed_out = count("timed_out");
  m.excluded_warmup = count("excluded_warmup");
  m.input_tokens = count("input_tokens");
  m.output_tokens = count("output_tokens");
  m.preemptions = count("preemptions");
  m.duration_s = value("duration_s");
  m.request_throughput = value("request_throughput_per_s");
  m.input_throughput = value("input_tokens_per_s");
  m.output_throughput = value("output_tokens_per_s");
  m.total_token_throughput = value("total_tokens_per_s");
  m.output_throughput_per_gpu = value("output_tokens_per_s_per_gpu");
  m.goodput = value("goodput_requests_per_s");
  m.slo_attainment = value("slo_attainment");
  m.error_rate = value("error_rate");
  m.prefix_cache_hit_rate = value("prefix_cache_hit_rate");
  m.cost_per_million_output_tokens = value("cost_per_million_output_tokens_usd");
  m.cost_per_million_tokens = value("cost_per_million_tokens_usd");
  m.ttft = latency_stats(*this, "ttft");
  m.tpot = latency_stats(*this, "tpot");
  m.itl = latency_stats(*this, "itl");
  m.e2e = latency_stats(*this, "e2e");
  m.queueing = latency_stats(*this, "queueing");
  return m;
}

RunFolder read_run_folder(const std::string& dir) {
  RunFolder run;
  run.path = dir;
  while (run.path.size() > 1 && run.path.back() == '/') run.path.pop_back();
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    throw ConfigError(dir + ": " + (fs::exists(dir, ec) ? "not a folder" : "no such folder") +
                      " — give the folder a run wrote with --out");
  }
  nlohmann::json j = read_summary(fs::path(dir) / "summary.json");
  run.summary = std::move(j["summary"]);
  j.erase("summary");
  j.erase("steps");
  j.erase("replicas");
  run.setup = std::move(j);
  RequestsCsvReader(fs::path(dir) / "requests.csv", run).read();
  std::sort(run.ttft_s.begin(), run.ttft_s.end());
  std::sort(run.tpot_s.begin(), run.tpot_s.end());
  std::sort(run.e2e_s.begin(), run.e2e_s.end());
  return run;
}

}  // namespace servesim
