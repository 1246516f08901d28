// Replica: one data-parallel copy of the model in the simulator — the shared Scheduler (the
// very code the engine runs) plus a SimulatedExecutor that turns each scheduled step into
// simulated time. The Simulation routes requests to it and calls begin_step()/end_step()
// around each step's kStepEnd event.
//
// Token ids are synthetic but faithful: prompts derive from (shared-prefix group, session
// stream, position) and sampled tokens from (session stream, position), so system prompts,
// multi-turn histories and Mooncake block hashes hit the prefix cache exactly as real token
// ids would. Requests carry ignore_eos, so each generates exactly its output length, and a
// request whose prompt plus output exceeds max_model_len is rejected, as vLLM's API server
// does.
//
// Owns its Scheduler, executor and the state of its in-flight requests (nothing is kept after
// a request leaves: memory is bounded by what is in flight). Borrows the CostModel.
// Not thread-safe.
#pragma once

#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <vector>

#include "engine/sched/scheduler.h"
#include "models/cost_model.h"
#include "models/engine_config.h"
#include "sim/core/request_record.h"
#include "sim/metrics/replica_summary.h"
#include "sim/serving/request_ledger.h"
#include "sim/serving/router.h"
#include "sim/serving/simulated_executor.h"
#include "sim/workload/request_source.h"

namespace servesim {

// What a replica reports while it runs; the Simulation implements it.
class ReplicaListener {
 public:
  virtual ~ReplicaListener() = default;
  // The request produced an output token in the step ending now; gap_s is the time since
  // its previous token (nullopt for its first, and for the 2nd.. of a step's speculative
  // run: one gap per step). Called for every token: the hottest path.
  virtual void on_token(const RequestSpec& request, std::optional<double> gap_s) = 0;
  // The request left the replica (finished or rejected); the record is complete.
  virtual void on_request_left(const RequestSpec& request, const RequestRecord& record) = 0;
};

struct ReplicaOptions {
  int vocab_size = 32000;  // range of synthetic token ids
  int sliding_window = 0;  // tokens; the model's window, 0 = none
  // Speculative decoding: prices the drafts; nullptr = off. Acceptance draws use `seed`.
  std::shared_ptr<const SpeculativeCostModel> speculative;
  uint64_t seed = 0;
  // vLLM --async-scheduling: host work overlaps the GPU's, and a request arriving during a
  // step that running requests follow waits one step more (admit()).
  bool async_scheduling = false;
  // With async_scheduling: the share of host work hidden; EngineConfig's default, not a copy.
  double async_host_overlap = EngineConfig{}.async_host_overlap;
};

class Replica {
 public:
  // Throws ConfigError for an invalid scheduler config.
  Replica(int index, const SchedulerConfig& config, const CostModel& cost_model,
          const ReplicaOptions& options);

  // Queues a request that arrived at now_s. A request the scheduler refuses is reported
  // through the listener at once. Under asynchronous scheduling a request that arrives
  // during a step is held back until that step ends: vLLM's engine core scheduled the next
  // step when this one started, so if running requests fill it the request joins the step
  // after (vLLM 0.14 EngineCore.step_with_batch_queue). `kv_transfer` marks a disaggregated
  // request's side (the prefill instance keeps its blocks; the decode instance loads the prompt's
  // KV).
  void admit(const RequestSpec& request, double now_s, ReplicaListener& listener,
             KvTransfer kv_transfer = KvTransfer::kNone);

  // Aborts request `id` as vLLM does when its client disconnects (the scheduler frees its KV
  // blocks and drops it; nothing is reported). False when the request is not here. Safe
  // during a step: the step's token for it is dropped at end_step().
  bool abort(uint64_t id);

  // When idle with work to do, schedules the next step and returns its duration in seconds;
  // nullopt when there is nothing to run (or a static batch is still gathering).
  std::optional<double> begin_step(double now_s);
  // The prompt KV loads the last begin_step() call started (disaggregated decode instances),
  // with or without a step; valid until the next begin_step().
  const std::vector<KvLoad>& started_kv_loads() const { return kv_loads_; }
  // Applies the step begun last, which ends at now_s. REQUIRES: busy().
  void end_step(double now_s, ReplicaListener& listener);

  // KV offload. The blocks the step begun last copies to the host tier once it ends (0 for
  // none) and that step's number, for host_stores_done().
  int host_store_blocks() const { return host_store_blocks_; }
  uint64_t host_store_step() const { return host_store_step_; }
  // A from_host load of started_kv_loads() takes load_s seconds (its record's kv_transfer).
  void host_load_started(uint64_t id, double load_s);
  // The host link finished a load, or the stores of step `step` and before. Seen at once when
  // idle (true: the scheduler may have work, start a step), else at the running step's end.
  bool host_load_done(uint64_t id);
  bool host_stores_done(uint64_t step);

  bool busy() const { return busy_; }
  bool has_unfinished() const { return scheduler_.has_unfinished() || !held_.empty(); }
  ReplicaLoad load() const;
  Scheduler& scheduler() { return scheduler_; }
  const Scheduler& scheduler() const { return scheduler_; }
  const StepTime& last_step() const { return executor_.last_step(); }
  int last_step_tokens() const { return last_step_tokens_; }
  int index() const { return index_; }

  // Totals over the run.
  int64_t steps() const { return steps_; }
  double busy_s() const { return busy_s_; }  // seconds spent in steps
  const StepTime& op_totals() const { return op_totals_; }
  // Steps the cost model priced beyond its measured range (StepTime::extrapolated).
  int64_t extrapolated_steps() const { return extrapolated_steps_; }
  // What held waiting requests back, step by step (RunReport::count_admission).
  const AdmissionCounters& admission() const { return admission_; }

 private:
  // end_step() under speculative decoding: accepted runs, one streamed chunk per step.
  void end_speculative_step(double now_s, ReplicaListener& listener);
  // The end shared by both end_step() paths: update, transfers seen, requests reported.
  void close_step(double now_s, ReplicaListener& listener);
  void report_left(const FinishedRequest& done, double now_s, ReplicaListener& listener);
  // Applies a schedule that runs nothing, keeping the KV loads it started (the driver must
  // still move their bytes).
  void close_empty_schedule(const SchedulerOutput& out);
  // Hands held requests to the scheduler: those that arrived before the step that just
  // ended, and all of them when no running request fills the next step (`all`).
  void release_held(bool all);

  // A request admitted under asynchronous scheduling while step `during_step` ran.
  struct Held {
    Request request;
    int64_t during_step = 0;  // steps_ + 1 when it arrived
  };

  int index_;
  ReplicaOptions options_;
  Scheduler scheduler_;
  SimulatedExecutor executor_;
  RequestLedger ledger_;
  std::vector<Held> held_;  // arrival order
  const SchedulerOutput* current_ = nullptr;
  StepResult result_;
  std::vector<KvLoad> kv_loads_;
  uint64_t host_store_step_ = 0;
  int host_store_blocks_ = 0;
  std::vector<uint64_t> loads_seen_at_step_end_;
  uint64_t stores_seen_at_step_end_ = 0;
  bool busy_ = false;
  double step_start_s_ = 0;
  int last_step_tokens_ = 0;
  int64_t steps_ = 0;
  double busy_s_ = 0;
  StepTime op_totals_;
  int64_t extrapolated_steps_ = 0;
  AdmissionCounters admission_;
};

}  // namespace servesim
