// RunFolder: one result folder read back — what `servesim simulate --out`, `servesim engine
// run --out` and `servesim loadtest --out` write (sim/metrics/result_writer.h): summary.json
// and requests.csv. Whether the run was simulated or measured does not matter to the reader;
// the folders compare the same way (`servesim compare`, the GUI's Compare tab).
//
// Strict: a missing file, a header without a required column, a row with the wrong number of
// fields, a field that is not a number where one is expected, or a summary value of the wrong
// JSON type is a one-line ConfigError naming the file, the line and the column (or the key).
// Lenient only where runs legitimately differ: summary keys that are absent or null read as
// "not measured" (NaN), and columns or keys the reader does not know are ignored, so a
// producer may add its own.
//
// A plain value; thread-safety: none needed (read_run_folder is stateless).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "sim/metrics/metrics.h"

namespace servesim {

struct RunFolder {
  std::string path;  // as given, without trailing '/'; names the run in tables and legends
  // summary.json's top level without "summary", "steps" and "replicas": how the run was set
  // up (scenario, model, gpu, backend, seed, ...), as the producer wrote it.
  nlohmann::json setup;
  // summary.json's "summary" object; every value the reader knows was checked to be a number
  // or null.
  nlohmann::json summary;
  uint64_t records = 0;  // requests.csv rows, any status
  uint64_t ok = 0;       // rows with status ok
  // Latencies of the ok rows in requests.csv, seconds, sorted ascending. TPOT leaves out
  // requests with fewer than two output tokens (its field is empty there).
  std::vector<double> ttft_s;
  std::vector<double> tpot_s;
  std::vector<double> e2e_s;

  // A number of the summary by its key, nested keys joined by '.' (e.g. "ttft.p50_ms",
  // "request_throughput_per_s"); NaN when absent or null.
  double value(std::string_view key) const;
  // "simulated" when the producer stamped simulated time (summary.json has simulated_s),
  // else "measured" (engine run, loadtest: wall clock).
  std::string_view clock() const;
  // The summary as MetricsSummary (latencies in seconds); NaN where a value is absent, and
  // counts of 0 where a count is absent.
  MetricsSummary metrics_summary() const;
};

// Reads `dir`/summary.json and `dir`/requests.csv. Throws ConfigError (one line naming the
// file, line and column or key) for anything that is not a well-formed result folder.
RunFolder read_run_folder(const std::string& dir);

}  // namespace servesim
