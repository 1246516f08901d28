// SetupDifference: where two runs' "setup" records (summary.json's "setup" object: the model,
// GPU, parallelism, every engine flag, the service, workload, SLO and metrics blocks, the seed,
// servesim's version — see sim/run/run_setup.h and serve/loadtest/loadtest_report.h) disagree,
// key by key, so `servesim compare` can say *why* two runs differ before showing by how much.
//
// Keys are dotted paths into the record ("engine.max_num_seqs", "workload.arrival.rate_qps");
// an array is one value. Keys that differ on every run by nature (when and where it ran) are
// left out. A key present in only one record is counted, not listed: a simulated and a
// measured run have different records, and listing every key only one of them has would bury
// the differences that matter.
// Plain values and stateless functions; thread-safe.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace servesim {

struct SetupDifference {
  std::string key;           // dotted path, e.g. "engine.max_num_seqs"
  nlohmann::json reference;  // the reference run's value
  nlohmann::json value;      // the other run's value
};

struct SetupDiff {
  std::vector<SetupDifference> differences;  // in key order
  size_t only_in_one = 0;                    // keys present in just one of the records
  bool compared = false;  // both runs had a "setup" object; false: nothing to say
};

// `reference` and `other` are the "setup" objects (null or absent when a run has none).
SetupDiff diff_setups(const nlohmann::json& reference, const nlohmann::json& other);

// "engine.max_num_seqs 256 → 64; seed 1 → 2" with at most `max_listed` entries, then
// "… and N more"; "(K keys only in one run)" appended when K > 0; "same setup" when nothing
// differs. REQUIRES: diff.compared.
std::string describe_setup_diff(const SetupDiff& diff, size_t max_listed);

// [{"key", "reference", "value"}] for the comparison's JSON.
nlohmann::json setup_diff_json(const SetupDiff& diff);

}  // namespace servesim
