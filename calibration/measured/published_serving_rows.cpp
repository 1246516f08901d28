#include "calibration/measured/published_serving_rows.h"

#include <cmath>
#include <fstream>
#include <map>

#include "models/config_error.h"
#include "models/dtype.h"
#include "sim/core/csv_line.h"

namespace servesim {
namespace {

constexpr const char* kRequired[] = {"model",       "gpu", "isl",     "osl",
                                     "concurrency", "tp",  "ttft_ms", "tpot_ms"};

std::map<std::string, size_t> columns_of(const std::string& header) {
  std::vector<std::string_view> fields;
  std::vector<std::string> scratch;
  split_csv_line(header, fields, scratch);
  std::map<std::string, size_t> out;
  for (size_t i = 0; i < fields.size(); ++i) out[std::string(fields[i])] = i;
  return out;
}

bool has_required(const std::map<std::string, size_t>& columns) {
  for (const char* name : kRequired)
    if (!columns.count(name)) return false;
  return true;
}

class Row {
 public:
  Row(const std::string& where, const std::map<std::string, size_t>& columns,
      const std::vector<std::string_view>& fields)
      : where_(where), columns_(columns), fields_(fields) {}

  std::string text(const std::string& name, bool required = true) const {
    const auto it = columns_.find(name);
    if (it == columns_.end() || it->second >= fields_.size()) {
      if (required) fail(name, "a value", "");
      return "";
    }
    return std::string(fields_[it->second]);
  }
  // Milliseconds as seconds: finite and > 0 in both (from_chars also reads "inf").
  double positive_ms_as_s(const std::string& name) const {
    double v = 0;
    if (!parse_double(text(name), v) || !std::isfinite(v) || !(v * 1e-3 > 0)) {
      fail(name, "a positive number", text(name));
    }
    return v * 1e-3;
  }
  int positive_int(const std::string& name) const {
    int64_t v = 0;
    if (!parse_int64(text(name), v) || v < 1 || v > 1'000'000'000)
      fail(name, "a positive whole number", text(name));
    return static_cast<int>(v);
  }
  [[noreturn]] void fail(const std::string& column, const std::string& expected,
                         const std::string& got) const {
    throw ConfigError(where_ + ": " + column + ": expected " + expected + ", got '" + got + "'");
  }

 private:
  const std::string& where_;
  const std::map<std::string, size_t>& columns_;
  const std::vector<std::string_view>& fields_;
};

MeasuredRun run_of(const Row& row, const std::string& where) {
  const std::string mode = row.text("mode", false);
  if (!mode.empty() && mode != "agg")
    row.fail("mode", "\"agg\" (an aggregated deployment; disaggregated rows are not read)", mode);
  MeasuredRun run;
  run.source = where;
  run.format = "published";
  run.model = row.text("model");
  run.gpu = row.text("gpu");
  run.backend = row.text("engine", false);
  run.engine_version = row.text("engine_version", false);
  run.tensor_parallel_size = row.positive_int("tp");
  run.pipeline_parallel_size = row.text("pp", false).empty() ? 0 : row.positive_int("pp");
  // Rows in the bf16 checkpoint's own precision leave it empty; a quantised run names its
  // weights' precision (the shared set's 4000/1000 rows: "fp8").
  const std::string precision = row.text("precision", false);
  if (!precision.empty()) {
    try {
      run.weight_dtype = parse_dtype(precision, "precision");
    } catch (const ConfigError&) {
      row.fail("precision",
               "the weights' precision (bf16, fp16, fp8, int8, int4, mxfp4) or empty for the "
               "model's own",
               precision);
    }
  }
  run.load.max_concurrency = row.positive_int("concurrency");
  run.prompt_tokens_per_request = row.positive_int("isl");
  run.output_tokens_per_request = row.positive_int("osl");
  run.summary.ttft.mean_s = row.positive_ms_as_s("ttft_ms");
  run.summary.tpot.mean_s = row.positive_ms_as_s("tpot_ms");
  return run;
}

}  // namespace

bool is_published_serving_rows(const std::string& path) {
  std::ifstream in(path);
  std::string header;
  return in && std::getline(in, header) && has_required(columns_of(header));
}

std::vector<MeasuredRun> read_published_serving_rows(const std::string& path,
                                                     const BenchmarkProtocol& protocol) {
  std::ifstream in(path);
  if (!in) throw ConfigError(path + ": cannot open the file");
  std::string line;
  if (!std::getline(in, line)) throw ConfigError(path + ": no rows (the file is empty)");
  const std::map<std::string, size_t> columns = columns_of(line);
  for (const char* name : kRequired)
    if (!columns.count(name))
      throw ConfigError(path + ":1: missing column '" + name +
                        "' (published rows need model, gpu, isl, osl, concurrency, tp, ttft_ms, "
                        "tpot_ms)");
  std::vector<MeasuredRun> runs;
  std::vector<std::string_view> fields;
  std::vector<std::string> scratch;
  for (size_t number = 2; std::getline(in, line); ++number) {
    if (trim(line).empty()) continue;
    split_csv_line(line, fields, scratch);
    const std::string where = path + ":" + std::to_string(number);
    runs.push_back(run_of(Row(where, columns, fields), where));
    runs.back().protocol = protocol;
  }
  if (runs.empty()) throw ConfigError(path + ": no rows after the header");
  return runs;
}

}  // namespace servesim
