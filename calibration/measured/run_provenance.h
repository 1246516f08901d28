// RunProvenance: what the source of published serving rows records of each run, read from a
// CSV beside them:
//   tp,precision,isl,osl,concurrency,recorded_concurrency,upstream_id
// One line per run, keyed by the first five columns as the rows give them (precision empty for
// the checkpoint's own weights). recorded_concurrency is the number of clients the source says
// the run was measured at, empty where it records none: such a row's `concurrency` is not the
// load it ran at (the shared Qwen3-32B set's three fp8 runs carry their deployment's batch size
// there), so no closed-loop replay of it can be compared with its means. upstream_id names the
// run in its source. configs/validation/published-vllm-h100-qwen3-32b-provenance.csv is one.
//
// Immutable after read_file; thread-safe.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <tuple>

#include "calibration/measured/measured_run.h"

namespace servesim {

class RunProvenance {
 public:
  // Throws ConfigError "file:line: column: expected ..., got '...'" for a malformed line, and
  // one line naming the file for a header that is not the one above, a run listed twice, a
  // file that cannot be read or that lists no run.
  static RunProvenance read_file(const std::string& path);

  // Whether a published row was measured at the concurrency it names. Throws ConfigError naming
  // the run when the file has no line for it, or records another concurrency for it.
  // REQUIRES: run.format == "published".
  bool measured_at_named_load(const MeasuredRun& run) const;

  // The run's id in its source. REQUIRES: the file has a line for it.
  const std::string& upstream_id(const MeasuredRun& run) const;

  const std::string& path() const { return path_; }

 private:
  // tp, weights' precision (unset: the checkpoint's own), isl, osl, concurrency.
  using Key = std::tuple<int, std::optional<DType>, int, int, int>;
  struct Record {
    std::optional<int> recorded_concurrency;  // clients; unset: the source records none
    std::string upstream_id;
  };

  const Record& record_of(const MeasuredRun& run) const;

  std::string path_;
  std::map<Key, Record> records_;
};

}  // namespace servesim
