#include "calibration/measured/run_provenance.h"

#include <fstream>
#include <vector>

#include "models/config_error.h"
#include "sim/core/csv_line.h"

namespace servesim {
namespace {

constexpr const char* kHeader = "tp,precision,isl,osl,concurrency,recorded_concurrency,upstream_id";
constexpr const char* kColumns[] = {
    "tp", "precision", "isl", "osl", "concurrency", "recorded_concurrency", "upstream_id"};

// One line's fields, failing with the line and the column named.
class Line {
 public:
  Line(const std::string& where, const std::vector<std::string_view>& fields)
      : where_(where), fields_(fields) {}

  int clients(size_t column) const {
    int64_t v = 0;
    if (!parse_int64(fields_[column], v) || v < 1 || v > 1'000'000'000)
      fail(column, "a positive whole number", fields_[column]);
    return static_cast<int>(v);
  }
  std::optional<DType> precision() const {
    if (fields_[1].empty()) return std::nullopt;
    try {
      return parse_dtype(fields_[1], "precision");
    } catch (const ConfigError&) {
      fail(1, "the weights' precision as the rows give it (fp8, ...) or empty for the model's own",
           fields_[1]);
    }
  }
  std::optional<int> recorded() const {
    if (fields_[5].empty()) return std::nullopt;
    return clients(5);
  }
  [[noreturn]] void fail(size_t column, const std::string& expected, std::string_view got) const {
    throw ConfigError(where_ + ": " + kColumns[column] + ": expected " + expected + ", got '" +
                      std::string(got) + "'");
  }

 private:
  const std::string& where_;
  const std::vector<std::string_view>& fields_;
};

std::string describe(const MeasuredRun& run) {
  return run.source + " (TP " + std::to_string(run.tensor_parallel_size) + ", " +
         std::to_string(static_cast<int>(run.prompt_tokens_per_request)) + "/" +
         std::to_string(static_cast<int>(run.output_tokens_per_request)) + ", " +
         std::to_string(run.load.max_concurrency.value_or(0)) + " clients)";
}

}  // namespace

RunProvenance RunProvenance::read_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw ConfigError(path + ": cannot open the provenance file");
  std::string text;
  if (!std::getline(in, text) || trim(text) != kHeader)
    throw ConfigError(path + ":1: expected the header " + std::string(kHeader));
  RunProvenance out;
  out.path_ = path;
  std::vector<std::string_view> fields;
  std::vector<std::string> scratch;
  for (size_t number = 2; std::getline(in, text); ++number) {
    if (trim(text).empty()) continue;
    split_csv_line(text, fields, scratch);
    const std::string where = path + ":" + std::to_string(number);
    if (fields.size() != std::size(kColumns))
      throw ConfigError(where + ": expected 7 fields (" + kHeader + "), got " +
                        std::to_string(fields.size()));
    const Line line(where, fields);
    const Key key{line.clients(0), line.precision(), line.clients(2), line.clients(3),
                  line.clients(4)};
    Record record{line.recorded(), std::string(fields[6])};
    if (!out.records_.emplace(key, std::move(record)).second)
      throw ConfigError(where + ": a second line for the run at TP " + std::string(fields[0]) +
                        ", " + std::string(fields[2]) + "/" + std::string(fields[3]) + ", " +
                        std::string(fields[4]) + " clients");
  }
  if (out.records_.empty()) throw ConfigError(path + ": no runs after the header");
  return out;
}

const RunProvenance::Record& RunProvenance::record_of(const MeasuredRun& run) const {
  const Key key{
      run.tensor_parallel_size, run.weight_dtype, static_cast<int>(run.prompt_tokens_per_request),
      static_cast<int>(run.output_tokens_per_request), run.load.max_concurrency.value_or(0)};
  const auto it = records_.find(key);
  if (it == records_.end())
    throw ConfigError(describe(run) + " has no line in " + path_ +
                      ": add one, or leave --provenance out");
  return it->second;
}

bool RunProvenance::measured_at_named_load(const MeasuredRun& run) const {
  const Record& r = record_of(run);
  if (!r.recorded_concurrency) return false;
  if (*r.recorded_concurrency != run.load.max_concurrency.value_or(0))
    throw ConfigError(describe(run) + ": " + path_ + " records " +
                      std::to_string(*r.recorded_concurrency) + " clients for that run");
  return true;
}

const std::string& RunProvenance::upstream_id(const MeasuredRun& run) const {
  return record_of(run).upstream_id;
}

}  // namespace servesim
