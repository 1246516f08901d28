// ResultWriter: the output format shared by every command that serves a workload —
// `servesim simulate` and `servesim engine run` — so their results compare line by line:
// requests.csv (one RequestRecord a line) and timeseries.csv (one TimeSample a line) in a
// folder, written while the run goes through the Observer seam — and, for agent workloads,
// sessions.csv (one SessionRecord a line), opened at the first session, and sessions.jsonl
// (each session's trace line) when the workload records traces; plus the JSON of a
// MetricsSummary / ReplicaSummary (summary.json's keys) and the summary table both print.
//
// Numbers: latencies in JSON are milliseconds (keys end in _ms); CSV times are seconds since
// the run's start (simulated or wall clock, as the producer's records are).
// Files appear whole or not at all (AtomicFile): they are written under temporary names and
// renamed by commit(). A ResultWriter destroyed without commit() commits then (reporting a
// failure on stderr, as a destructor cannot throw) unless an exception is unwinding past it,
// in which case the half-written files are removed.
// Ownership: a ResultWriter owns its two files. Thread-safety: none; the free functions are
// stateless.
#pragma once

#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "sim/core/observer.h"
#include "sim/metrics/atomic_file.h"
#include "sim/metrics/metrics.h"
#include "sim/metrics/replica_summary.h"

namespace servesim {

class ResultWriter final : public Observer {
 public:
  // Creates `out_dir` (and its parents), proves it writable and opens requests.csv and
  // timeseries.csv there, each with its header line. Throws ConfigError naming the folder
  // when it cannot. With tenant names (service.tenants, by index), requests.csv ends in a
  // `tenant` column; without, its columns stay as they were (readers go by column name).
  // With `pool_column` (service.pools), a `pool_s` column (the wait for a connection) comes
  // after kv_transfer_s.
  explicit ResultWriter(const std::string& out_dir, std::vector<std::string> tenant_names = {},
                        bool pool_column = false);
  ~ResultWriter() override;
  ResultWriter(const ResultWriter&) = delete;
  ResultWriter& operator=(const ResultWriter&) = delete;

  void on_request_done(const RequestRecord& record) override;
  void on_sample(const TimeSample& sample) override;
  void on_session_done(const SessionRecord& record) override;

  // Puts both files in place. Throws ConfigError (a full disk). REQUIRES: not committed yet.
  void commit();

 private:
  bool dir_checked_;  // first member: the folder is checked before the files open
  AtomicFile requests_;
  AtomicFile samples_;
  std::string out_dir_;
  std::unique_ptr<AtomicFile> sessions_;       // agent workloads only
  std::unique_ptr<AtomicFile> session_trace_;  // sessions.jsonl: agent.record_trace only
  std::vector<std::string> tenant_names_;
  bool pool_column_ = false;
  bool committed_ = false;
  int exceptions_at_start_;  // std::uncaught_exceptions() when constructed
};

// summary.json's "summary" object: counts, throughputs, and for TTFT/TPOT/ITL/E2E/queueing
// {count, mean_ms, p50_ms, p90_ms, p95_ms, p99_ms, max_ms}; NaN values are null.
nlohmann::json summary_json(const MetricsSummary& summary);

// summary.json's "steps" of a stepped-concurrency workload: each step's summary with its
// "clients" and "unstable_percentiles" (e.g. ["p95", "p99"]: too few samples for them, see
// sim/metrics/knee.h; empty when the step was long enough). REQUIRES: clients has an entry
// per summary. Empty array for other workloads.
nlohmann::json steps_json(const std::vector<MetricsSummary>& by_step,
                          const std::vector<int>& clients);

// One entry of summary.json's "replicas": steps, busy_s, preemptions, prefix_cache_hit_rate,
// evicted_blocks, the caps (max_num_seqs, max_num_batched_tokens), the admission counters
// (peak_running, peak_kv_usage, and seconds of steps that left requests waiting: waiting_s,
// at_max_num_seqs_s, at_token_budget_s, at_kv_limit_s) and op_seconds (seconds per op,
// op_name keys).
nlohmann::json replica_json(const ReplicaSummary& replica);

// The summary table users read: request counts, throughput, latency percentiles (ms),
// goodput, prefix-cache hit rate, preemptions, error rate and cost. `clock` names the time
// the duration was measured in ("simulated", "wall clock").
void print_summary(std::FILE* out, const MetricsSummary& summary, std::string_view clock);

}  // namespace servesim
