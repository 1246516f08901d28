#include "calibration/measured/vllm_bench_result.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>
#include <optional>
#include <sstream>

#include "models/config_error.h"
#include "models/json_file.h"
#include "sim/core/csv_line.h"

namespace servesim {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
// Beyond these a figure is a unit mistake or an edit, and sums of such figures overflow.
constexpr double kMaxSeconds = 1e9;                    // a latency or send-time span (31 years)
constexpr double kMinDuration_s = 1e-6;                // shorter makes the throughputs infinite
constexpr uint64_t kMaxCount = 1'000'000'000'000'000;  // completed + failed fits uint64_t

// Keys only vllm/benchmarks/serve.py writes; benchmark_serving.py wrote none of them.
constexpr const char* kCurrentLayoutKeys[] = {"endpoint_type", "label", "start_times", "latencies",
                                              "max_concurrent_requests"};
// Per-request arrays whose presence means the file was saved with --save-detailed.
constexpr const char* kDetailedKeys[] = {"output_lens", "ttfts", "itls"};

class ResultReader {
 public:
  ResultReader(const nlohmann::json& j, const std::string& origin) : j_(j), origin_(origin) {}

  MeasuredRun read() const {
    if (!j_.is_object() || !j_.contains("completed") || !j_.contains("duration")) {
      throw ConfigError(origin_ +
                        ": not a vllm bench serve result (no \"completed\" and \"duration\" keys); "
                        "save one with vllm bench serve --save-result");
    }
    MeasuredRun run;
    run.source = origin_;
    run.format = is_current_layout() ? "vllm-bench" : "vllm-bench-legacy";
    run.model = text("model_id");
    run.backend = j_.contains("endpoint_type") ? text("endpoint_type") : text("backend");
    run.load = load();
    read_metadata(run);
    read_requests(run);
    run.summary = run.requests.empty() ? MetricsSummary{} : summary_of_requests(run.requests);
    overlay_summary(run);
    return run;
  }

 private:
  bool is_current_layout() const {
    return std::any_of(std::begin(kCurrentLayoutKeys), std::end(kCurrentLayoutKeys),
                       [this](const char* key) { return j_.contains(key); });
  }

  [[noreturn]] void fail(const std::string& key, const std::string& what) const {
    throw ConfigError(origin_ + ": " + key + " " + what);
  }

  // `vllm bench serve --metadata KEY=VALUE ...` puts each pair at the top level as a string.
  // The deployment's own keys fill what the result does not otherwise say: tp /
  // tensor_parallel_size, pp / pipeline_parallel_size, gpu, vllm_version / version.
  void read_metadata(MeasuredRun& run) const {
    const auto parallel = [this](const char* key) -> int {
      const auto it = j_.find(key);
      if (it == j_.end() || !it->is_string()) return 0;
      const std::string& v = it->get_ref<const std::string&>();
      if (v.empty() || v.size() > 4 || v.find_first_not_of("0123456789") != std::string::npos ||
          std::stoi(v) < 1) {
        fail(key, "is \"" + v + "\", expected a degree >= 1 (--metadata " + key + "=2)");
      }
      return std::stoi(v);
    };
    const auto label = [this](std::initializer_list<const char*> keys) -> std::string {
      for (const char* key : keys) {
        const auto it = j_.find(key);
        if (it != j_.end() && it->is_string()) return it->get<std::string>();
      }
      return "";
    };
    run.tensor_parallel_size =
        parallel("tp") > 0 ? parallel("tp") : parallel("tensor_parallel_size");
    run.pipeline_parallel_size =
        parallel("pp") > 0 ? parallel("pp") : parallel("pipeline_parallel_size");
    run.gpu = label({"gpu"});
    run.engine_version = label({"vllm_version", "version"});
  }

  // A number, or nullopt when absent or null.
  std::optional<double> number(const std::string& key) const {
    const auto it = j_.find(key);
    if (it == j_.end() || it->is_null()) return std::nullopt;
    if (!it->is_number()) fail(key, std::string("is ") + it->type_name() + ", expected a number");
    return it->get<double>();
  }

  std::optional<uint64_t> count(const std::string& key) const {
    const auto it = j_.find(key);
    if (it == j_.end() || it->is_null()) return std::nullopt;
    if (!it->is_number_unsigned() || it->get<uint64_t>() > kMaxCount) {
      fail(key, "is " + it->dump() + ", expected a count in [0, 1e15]");
    }
    return it->get<uint64_t>();
  }

  std::string text(const std::string& key) const {
    const auto it = j_.find(key);
    if (it == j_.end() || it->is_null()) return "";
    if (!it->is_string()) fail(key, std::string("is ") + it->type_name() + ", expected a string");
    return it->get<std::string>();
  }

  MeasuredLoad load() const {
    MeasuredLoad load;
    const auto rate = j_.find("request_rate");
    if (rate != j_.end() && rate->is_string() && rate->get<std::string>() == "inf") {
      load.request_rate_per_s = MeasuredLoad::kUnlimited;
    } else if (const std::optional<double> r = number("request_rate")) {
      if (!(*r > 0)) fail("request_rate", "is " + format_number(*r) + ", expected > 0 or \"inf\"");
      load.request_rate_per_s = *r;
    }
    if (const std::optional<double> b = number("burstiness")) {
      if (!(*b > 0)) fail("burstiness", "is " + format_number(*b) + ", expected > 0");
      load.burstiness = *b;
    }
    load.ramp_up = !text("ramp_up_strategy").empty();
    if (const std::optional<uint64_t> c = count("max_concurrency")) {
      if (*c < 1 || *c > 1'000'000) fail("max_concurrency", "must be in [1, 1000000] or null");
      load.max_concurrency = static_cast<int>(*c);
    }
    return load;
  }

  // The per-request array `key` (nullptr when absent), checked to have n entries.
  const nlohmann::json* array(const char* key, size_t n) const {
    const auto it = j_.find(key);
    if (it == j_.end() || it->is_null()) return nullptr;
    if (!it->is_array()) fail(key, std::string("is ") + it->type_name() + ", expected an array");
    if (it->size() != n) {
      fail(key, "has " + std::to_string(it->size()) + " entries where input_lens has " +
                    std::to_string(n) + " (a truncated or edited file?)");
    }
    return &*it;
  }

  static std::string at(const char* key, size_t i) {
    return std::string(key) + "[" + std::to_string(i) + "]";
  }

  int length_at(const nlohmann::json& a, const char* key, size_t i) const {
    const nlohmann::json& v = a[i];
    if (!v.is_number_unsigned() || v.get<uint64_t>() > 100'000'000) {
      fail(at(key, i), "is " + v.dump() + ", expected a token count >= 0");
    }
    return static_cast<int>(v.get<uint64_t>());
  }

  // Seconds; NaN for null (a request that failed before it was timed).
  double seconds_at(const nlohmann::json& v, const std::string& where) const {
    if (v.is_null()) return kNaN;
    if (!v.is_number()) fail(where, "is " + v.dump() + ", expected seconds");
    return checked_seconds(v.get<double>(), where);
  }

  double checked_seconds(double s, const std::string& where) const {
    if (s < 0) fail(where, "is " + format_number(s) + ", a negative latency");
    if (s > kMaxSeconds)
      fail(where, "is " + format_number(s) + " s, beyond 1e9 s (a unit mistake?)");
    return s;
  }

  std::vector<double> gaps_at(const nlohmann::json& itls, size_t i) const {
    const nlohmann::json& gaps = itls[i];
    if (!gaps.is_array()) fail(at("itls", i), "is " + gaps.dump() + ", expected an array");
    std::vector<double> out;
    for (size_t k = 0; k < gaps.size(); ++k) {
      out.push_back(seconds_at(gaps[k], at("itls", i) + "[" + std::to_string(k) + "]"));
    }
    return out;
  }

  bool failed_at(const nlohmann::json* errors, size_t i) const {
    if (errors == nullptr || (*errors)[i].is_null()) return false;
    if (!(*errors)[i].is_string()) fail(at("errors", i), "is " + (*errors)[i].dump());
    return !(*errors)[i].get<std::string>().empty();
  }

  struct Arrays {
    const nlohmann::json* input = nullptr;
    const nlohmann::json* output = nullptr;
    const nlohmann::json* ttfts = nullptr;
    const nlohmann::json* itls = nullptr;
    const nlohmann::json* latencies = nullptr;
    const nlohmann::json* starts = nullptr;
    const nlohmann::json* errors = nullptr;
  };

  Arrays arrays() const {
    Arrays a;
    const auto input = j_.find("input_lens");
    if (input == j_.end() || input->is_null()) {
      for (const char* key : kDetailedKeys) {
        if (j_.contains(key)) fail(key, "is there but input_lens is not (an edited file?)");
      }
      return a;
    }
    if (!input->is_array()) fail("input_lens", "is " + std::string(input->type_name()));
    const size_t n = input->size();
    a.input = &*input;
    a.output = array("output_lens", n);
    a.ttfts = array("ttfts", n);
    a.itls = array("itls", n);
    a.latencies = array("latencies", n);
    a.starts = array("start_times", n);
    a.errors = array("errors", n);
    if (a.output == nullptr || a.ttfts == nullptr) {
      fail(a.output == nullptr ? "output_lens" : "ttfts", "is missing beside input_lens");
    }
    if (a.itls == nullptr && a.latencies == nullptr) {
      fail("latencies", "and itls are both missing: no request's end-to-end latency");
    }
    return a;
  }

  MeasuredRequest request_at(const Arrays& a, size_t i) const {
    MeasuredRequest r;
    r.prompt_tokens = length_at(*a.input, "input_lens", i);
    r.output_tokens = length_at(*a.output, "output_lens", i);
    if (a.starts != nullptr) r.arrival_s = seconds_or_time((*a.starts)[i], at("start_times", i));
    const double ttft = seconds_at((*a.ttfts)[i], at("ttfts", i));
    r.ok = !failed_at(a.errors, i) && std::isfinite(ttft) && r.output_tokens > 0;
    if (!r.ok) {
      r.output_tokens = 0;
      return r;
    }
    r.ttft_s = ttft;
    if (a.itls != nullptr) r.itl_s = gaps_at(*a.itls, i);
    if (a.latencies != nullptr) {
      r.e2e_s = seconds_at((*a.latencies)[i], at("latencies", i));
    } else {
      r.e2e_s = ttft;
      for (double gap : r.itl_s) r.e2e_s += gap;
      checked_seconds(r.e2e_s, at("ttfts", i) + " plus itls[" + std::to_string(i) + "]");
    }
    if (!(r.e2e_s >= r.ttft_s)) {
      fail(at("latencies", i), "is " + format_number(r.e2e_s) + " s, less than ttfts[" +
                                   std::to_string(i) + "] " + format_number(ttft) + " s");
    }
    return r;
  }

  // A send time: any clock (perf_counter), so any finite number.
  double seconds_or_time(const nlohmann::json& v, const std::string& where) const {
    if (!v.is_number() || !std::isfinite(v.get<double>())) {
      fail(where, "is " + v.dump() + ", expected a time in seconds");
    }
    return v.get<double>();
  }

  void read_requests(MeasuredRun& run) const {
    const Arrays a = arrays();
    if (a.input == nullptr) return;
    for (size_t i = 0; i < a.input->size(); ++i) run.requests.push_back(request_at(a, i));
    if (a.starts == nullptr || run.requests.empty()) return;
    double first_s = std::numeric_limits<double>::infinity();
    for (const MeasuredRequest& r : run.requests) first_s = std::min(first_s, r.arrival_s);
    for (size_t i = 0; i < run.requests.size(); ++i) {
      run.requests[i].arrival_s = checked_seconds(run.requests[i].arrival_s - first_s,
                                                  at("start_times", i) + " after the first send");
    }
  }

  // The file's {mean,median,pNN}_NAME_ms over what the requests gave.
  void overlay_latency(LatencyStats& s, const std::string& name, uint64_t count) const {
    bool any = false;
    auto take = [&](const std::string& key, double& field) {
      const std::string full = key + "_" + name + "_ms";
      if (const std::optional<double> ms = number(full)) {
        if (!(*ms >= 0 && *ms <= kMaxSeconds * 1e3)) {
          fail(full, "is " + format_number(*ms) + ", expected milliseconds in [0, 1e12]");
        }
        field = *ms / 1e3;
        any = true;
      }
    };
    take("mean", s.mean_s);
    take("median", s.p50_s);
    take("p50", s.p50_s);
    take("p90", s.p90_s);
    take("p95", s.p95_s);
    take("p99", s.p99_s);
    take("p100", s.max_s);
    if (any && s.count == 0) s.count = count;
  }

  void overlay_summary(MeasuredRun& run) const {
    MetricsSummary& s = run.summary;
    const uint64_t not_ok = static_cast<uint64_t>(std::count_if(
        run.requests.begin(), run.requests.end(), [](const auto& r) { return !r.ok; }));
    s.completed = count("completed").value_or(0);
    s.rejected = count("failed").value_or(not_ok);
    s.requests = s.completed + s.rejected;
    s.error_rate = s.requests > 0 ? static_cast<double>(s.rejected) / s.requests : kNaN;
    s.input_tokens = count("total_input_tokens").value_or(s.input_tokens);
    s.output_tokens = count("total_output_tokens").value_or(s.output_tokens);
    const std::optional<double> duration = number("duration");
    if (!duration || !(*duration >= kMinDuration_s)) {
      fail("duration", "is " + (duration ? format_number(*duration) : std::string("null")) +
                           ", expected the run's seconds, >= 1e-6");
    }
    s.duration_s = *duration;
    s.request_throughput = rate("request_throughput").value_or(s.completed / s.duration_s);
    s.input_throughput = s.input_tokens / s.duration_s;
    s.output_throughput = rate("output_throughput").value_or(s.output_tokens / s.duration_s);
    s.total_token_throughput =
        rate("total_token_throughput").value_or((s.input_tokens + s.output_tokens) / s.duration_s);
    s.goodput = rate("request_goodput").value_or(s.goodput);
    const uint64_t gaps = s.output_tokens > s.completed ? s.output_tokens - s.completed : 0;
    overlay_latency(s.ttft, "ttft", s.completed);
    overlay_latency(s.tpot, "tpot", s.completed);
    overlay_latency(s.itl, "itl", gaps);
    overlay_latency(s.e2e, "e2el", s.completed);
  }

  // A throughput of the file's: per second, >= 0.
  std::optional<double> rate(const std::string& key) const {
    const std::optional<double> r = number(key);
    if (r && !(*r >= 0)) fail(key, "is " + format_number(*r) + ", expected a rate >= 0");
    return r;
  }

  const nlohmann::json& j_;
  const std::string& origin_;
};

}  // namespace

MeasuredRun vllm_bench_result_from_json(const nlohmann::json& result, const std::string& origin) {
  return ResultReader(result, origin).read();
}

namespace {

// The file's results: the whole file as one JSON value, or else (--append-result) one JSON
// object per non-empty line. A file that is neither is reported as the whole file's parse
// error, which names where it broke.
std::vector<nlohmann::json> file_results(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ConfigError(path + ": cannot open file");
  std::ostringstream buffer;
  buffer << in.rdbuf();
  const std::string text = buffer.str();
  try {
    return {parse_json_text(text, path)};
  } catch (const ConfigError& whole) {
    std::vector<nlohmann::json> results;
    std::istringstream lines(text);
    std::string line;
    for (size_t number = 1; std::getline(lines, line); ++number) {
      if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
      try {
        results.push_back(parse_json_text(line, path + ":" + std::to_string(number)));
      } catch (const ConfigError&) {
        results.clear();
        break;
      }
      if (!results.back().is_object()) {
        results.clear();
        break;
      }
    }
    if (results.size() < 2) {
      throw ConfigError(std::string(whole.what()) +
                        " (a truncated file? give one whole --save-result file, or one written "
                        "with --append-result: a result per line)");
    }
    return results;
  }
}

}  // namespace

std::pair<std::string, size_t> split_result_number(const std::string& path) {
  const size_t hash = path.rfind('#');
  if (hash == std::string::npos || hash + 1 == path.size()) return {path, 0};
  const std::string digits = path.substr(hash + 1);
  if (digits.size() > 9 || digits.find_first_not_of("0123456789") != std::string::npos) {
    return {path, 0};
  }
  const size_t number = static_cast<size_t>(std::stoul(digits));
  // "#0" names no result: kept as a number no file holds, so it is refused as out of range.
  return {path.substr(0, hash), number == 0 ? std::numeric_limits<size_t>::max() : number};
}

std::vector<MeasuredRun> read_vllm_bench_results(const std::string& path) {
  const std::vector<nlohmann::json> results = file_results(path);
  std::vector<MeasuredRun> runs;
  for (size_t i = 0; i < results.size(); ++i) {
    const std::string origin = results.size() == 1 ? path : path + "#" + std::to_string(i + 1);
    runs.push_back(vllm_bench_result_from_json(results[i], origin));
  }
  return runs;
}

MeasuredRun read_vllm_bench_result(const std::string& path) {
  const auto [file, number] = split_result_number(path);
  std::vector<MeasuredRun> runs = read_vllm_bench_results(file);
  if (number == 0) {
    if (runs.size() == 1) return std::move(runs.front());
    throw ConfigError(file + ": holds " + std::to_string(runs.size()) +
                      " results appended with --append-result; name one as " + file + "#1 .. " +
                      file + "#" + std::to_string(runs.size()) +
                      " (calibrate serving reads them all)");
  }
  if (number > runs.size()) {
    throw ConfigError(path + ": the file holds " + std::to_string(runs.size()) +
                      (runs.size() == 1 ? " result" : " results") + "; number them from 1 to " +
                      std::to_string(runs.size()));
  }
  return std::move(runs[number - 1]);
}

}  // namespace servesim
