#include "calibration/measured/measured_run_reader.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>

#include "calibration/measured/timing_trace.h"
#include "calibration/measured/vllm_bench_result.h"
#include "models/config_error.h"
#include "sim/core/csv_line.h"
#include "sim/metrics/result_writer.h"

namespace servesim {
namespace {

namespace fs = std::filesystem;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

std::string folded(std::string_view name) {
  const size_t slash = name.rfind('/');
  if (slash != std::string_view::npos) name = name.substr(slash + 1);
  std::string out(name);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// The load shape of a result folder's workload block (summary.json's setup.workload), as far
// as MeasuredLoad can say it; other shapes (stepped, on/off, traces) keep the default, and
// their recorded send times are what a replay uses.
MeasuredLoad load_of(const nlohmann::json& workload) {
  MeasuredLoad load;
  if (!workload.is_object() || !workload.contains("arrival")) return load;
  const nlohmann::json& a = workload["arrival"];
  if (!a.is_object() || !a.contains("type") || !a["type"].is_string()) return load;
  const std::string type = a["type"].get<std::string>();
  auto number = [&a](const char* key) {
    return a.contains(key) && a[key].is_number() ? a[key].get<double>() : kNaN;
  };
  if (type == "closed" && a.contains("clients") && a["clients"].is_number_unsigned()) {
    load.max_concurrency = a["clients"].get<int>();
  } else if (type == "poisson" || type == "gamma" || type == "constant") {
    load.request_rate_per_s = number("rate_qps");
    // A gamma gap of shape k has a coefficient of variation of 1/sqrt(k).
    if (type == "gamma") load.burstiness = 1.0 / (number("cv") * number("cv"));
    if (type == "constant") load.burstiness = MeasuredLoad::kUnlimited;
  }
  return load;
}

// A workload's length when it is one number for every request ("prompt_tokens": 128), else NaN.
double fixed_length(const nlohmann::json& workload, const char* key) {
  if (!workload.is_object() || !workload.contains(key)) return kNaN;
  const nlohmann::json& v = workload[key];
  return v.is_number() ? v.get<double>() : kNaN;
}

// requests.csv's per-request columns (read_run_folder checked the file); absent columns read
// as NaN / 0.
std::vector<MeasuredRequest> folder_requests(const std::string& dir) {
  std::ifstream in(fs::path(dir) / "requests.csv");
  std::string line;
  std::getline(in, line);
  std::vector<std::string_view> fields;
  std::vector<std::string> scratch;
  split_csv_line(line, fields, scratch);
  std::map<std::string, size_t, std::less<>> index;
  for (size_t i = 0; i < fields.size(); ++i) index[std::string(fields[i])] = i;
  std::vector<std::pair<double, MeasuredRequest>> rows;  // by id
  while (std::getline(in, line)) {
    split_csv_line(line, fields, scratch);
    auto value = [&](const char* column) {
      double v = kNaN;
      const auto it = index.find(column);
      if (it != index.end()) parse_double(fields[it->second], v);
      return v;
    };
    MeasuredRequest r;
    r.ok = fields[index.at("status")] == "ok";
    r.arrival_s = value("arrival_s");
    auto tokens = [&](const char* column) {
      const double v = value(column);
      return std::isfinite(v) ? static_cast<int>(v) : 0;
    };
    r.prompt_tokens = tokens("prompt_tokens");
    r.output_tokens = tokens("output_tokens");
    if (r.ok) {
      r.ttft_s = value("ttft_s");
      r.e2e_s = value("e2e_s");
    }
    rows.emplace_back(value("id"), std::move(r));
  }
  std::stable_sort(rows.begin(), rows.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<MeasuredRequest> requests;
  for (auto& [id, r] : rows) requests.push_back(std::move(r));
  return requests;
}

std::string model_of(const nlohmann::json& setup) {
  const auto it = setup.find("model");
  if (it == setup.end()) return "";
  if (it->is_string()) return it->get<std::string>();
  if (it->is_object() && it->contains("name") && (*it)["name"].is_string()) {
    return (*it)["name"].get<std::string>();
  }
  return "";
}

MeasuredRun read_folder(const std::string& dir) {
  const RunFolder folder = read_run_folder(dir);
  MeasuredRun run;
  run.source = folder.path;
  run.format = folder.setup.contains("loadtest") ? "loadtest" : "run-folder";
  run.model = model_of(folder.setup);
  if (folder.setup.contains("backend") && folder.setup["backend"].is_string()) {
    run.backend = folder.setup["backend"].get<std::string>();
  }
  const nlohmann::json* setup = folder.setup.contains("setup") ? &folder.setup["setup"] : nullptr;
  if (setup != nullptr && setup->is_object() && setup->contains("workload")) {
    const nlohmann::json& workload = (*setup)["workload"];
    run.load = load_of(workload);
    run.prompt_tokens_per_request = fixed_length(workload, "prompt_tokens");
    run.output_tokens_per_request = fixed_length(workload, "output_tokens");
  }
  if (setup != nullptr && setup->is_object() && setup->contains("server_version") &&
      (*setup)["server_version"].is_string()) {
    run.engine_version = (*setup)["server_version"].get<std::string>();
  }
  run.requests = folder_requests(dir);
  if (run.has_arrivals()) {
    double first_s = run.requests.front().arrival_s;
    for (const MeasuredRequest& r : run.requests) first_s = std::min(first_s, r.arrival_s);
    for (MeasuredRequest& r : run.requests) r.arrival_s -= first_s;
  }
  run.summary = folder.metrics_summary();
  return run;
}

MeasuredRun read_any(const std::string& path) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) return read_folder(path);
  if (!fs::exists(path, ec)) {
    const auto [file, number] = split_result_number(path);
    if (number > 0 && fs::path(file).extension() == ".json" && fs::is_regular_file(file, ec)) {
      return read_vllm_bench_result(path);
    }
    throw ConfigError(path + ": no such file or folder");
  }
  const std::string ext = fs::path(path).extension().string();
  if (ext == ".json") return read_vllm_bench_result(path);
  if (ext == ".jsonl" || ext == ".csv") return read_timing_trace(path);
  throw ConfigError(path +
                    ": not a measured run — give a servesim loadtest --out folder, a vllm bench "
                    "serve --save-result .json file, or a timing trace (.jsonl or .csv)");
}

nlohmann::json load_json(const MeasuredLoad& load) {
  nlohmann::json j;
  j["max_concurrency"] = load.max_concurrency ? nlohmann::json(*load.max_concurrency) : nullptr;
  j["request_rate_per_s"] = std::isfinite(load.request_rate_per_s)
                                ? nlohmann::json(load.request_rate_per_s)
                                : nlohmann::json("inf");
  j["burstiness"] =
      std::isfinite(load.burstiness) ? nlohmann::json(load.burstiness) : nlohmann::json("inf");
  return j;
}

}  // namespace

bool same_model(std::string_view a, std::string_view b) {
  return folded(a) == folded(b);
}

namespace {

void check_model(const MeasuredRun& run, const std::string& path,
                 const std::string& expected_model) {
  if (!expected_model.empty() && !run.model.empty() && !same_model(run.model, expected_model)) {
    throw ConfigError(path + ": the run served " + run.model + ", not " + expected_model +
                      " — give a run of " + expected_model + " (or state the model it served)");
  }
}

}  // namespace

MeasuredRun read_measured_run(const std::string& path, const std::string& expected_model) {
  MeasuredRun run = read_any(path);
  check_model(run, path, expected_model);
  return run;
}

std::vector<MeasuredRun> read_measured_runs(const std::string& path,
                                            const std::string& expected_model) {
  std::error_code ec;
  if (!fs::is_regular_file(path, ec) || fs::path(path).extension() != ".json") {
    return {read_measured_run(path, expected_model)};
  }
  std::vector<MeasuredRun> runs = read_vllm_bench_results(path);
  for (const MeasuredRun& run : runs) check_model(run, run.source, expected_model);
  return runs;
}

RunFolder run_folder_from(const MeasuredRun& run) {
  RunFolder f;
  f.path = run.source;
  f.setup = {{"source", run.source},
             {"format", run.format},
             {"model", run.model},
             {"backend", run.backend},
             {"load", load_json(run.load)}};
  if (!run.gpu.empty()) f.setup["gpu"] = run.gpu;
  if (run.tensor_parallel_size > 0) f.setup["tp"] = run.tensor_parallel_size;
  if (run.pipeline_parallel_size > 0) f.setup["pp"] = run.pipeline_parallel_size;
  f.summary = summary_json(run.summary);
  f.records = run.requests.empty() ? run.summary.requests : run.requests.size();
  f.ok = run.requests.empty() ? run.summary.completed : 0;
  for (const MeasuredRequest& r : run.requests) {
    if (!r.ok) continue;
    ++f.ok;
    f.ttft_s.push_back(r.ttft_s);
    f.e2e_s.push_back(r.e2e_s);
    if (r.output_tokens > 1) f.tpot_s.push_back((r.e2e_s - r.ttft_s) / (r.output_tokens - 1));
  }
  std::sort(f.ttft_s.begin(), f.ttft_s.end());
  std::sort(f.tpot_s.begin(), f.tpot_s.end());
  std::sort(f.e2e_s.begin(), f.e2e_s.end());
  return f;
}

ReplaySpec replay_spec_from(const MeasuredRun& run) {
  const bool fixed_lengths = std::isfinite(run.prompt_tokens_per_request) &&
                             std::isfinite(run.output_tokens_per_request) &&
                             run.summary.completed > 0;
  if (run.requests.empty() && !fixed_lengths) {
    throw ConfigError(run.source +
                      ": no per-request data to replay (a vllm bench serve result saved without "
                      "--save-detailed?); save it with --save-detailed, or give a loadtest folder "
                      "or a timing trace");
  }
  if (run.load.ramp_up && !run.has_arrivals()) {
    throw ConfigError(run.source +
                      ": the request rate ramped up during the run and no send times were "
                      "recorded, so its load cannot be replayed; save the run with vLLM >= 0.10's "
                      "--save-detailed (it records start_times) or give a timing trace");
  }
  ReplaySpec spec;
  if (run.requests.empty()) {
    spec.requests.assign(
        run.summary.completed,
        {ReplayRequest::kNone, static_cast<int>(std::lround(run.prompt_tokens_per_request)),
         static_cast<int>(std::lround(run.output_tokens_per_request))});
  }
  spec.recorded_arrivals = run.has_arrivals();
  spec.max_concurrency = run.load.max_concurrency;
  spec.request_rate_per_s = run.load.request_rate_per_s;
  spec.burstiness = run.load.burstiness;
  for (size_t i = 0; i < run.requests.size(); ++i) {
    const MeasuredRequest& r = run.requests[i];
    if (!r.ok) continue;
    if (r.prompt_tokens < 1 || r.output_tokens < 1) {
      throw ConfigError(run.source + ": request " + std::to_string(i) + " has " +
                        std::to_string(r.prompt_tokens) + " prompt and " +
                        std::to_string(r.output_tokens) +
                        " output tokens; a replay needs at least 1 of each");
    }
    spec.requests.push_back({r.arrival_s, r.prompt_tokens, r.output_tokens});
  }
  if (spec.requests.empty()) {
    throw ConfigError(run.source + ": no request succeeded, so none can be replayed");
  }
  if (spec.recorded_arrivals) {
    std::stable_sort(spec.requests.begin(), spec.requests.end(),
                     [](const auto& a, const auto& b) { return a.arrival_s < b.arrival_s; });
  }
  return spec;
}

}  // namespace servesim
