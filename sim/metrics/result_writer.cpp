#include "sim/metrics/result_writer.h"

#include <cmath>
#include <filesystem>

#include "models/config_error.h"
#include "sim/metrics/knee.h"

namespace servesim {
namespace {

nlohmann::json number(double x) {
  return std::isnan(x) ? nlohmann::json() : nlohmann::json(x);
}

nlohmann::json stats_json(const LatencyStats& s) {
  auto ms = [](double x) { return std::isnan(x) ? nlohmann::json() : nlohmann::json(x * 1e3); };
  return {{"count", s.count},      {"mean_ms", ms(s.mean_s)}, {"p50_ms", ms(s.p50_s)},
          {"p90_ms", ms(s.p90_s)}, {"p95_ms", ms(s.p95_s)},   {"p99_ms", ms(s.p99_s)},
          {"max_ms", ms(s.max_s)}};
}

void print_latency_row(std::FILE* out, const char* name, const LatencyStats& s) {
  if (s.count == 0) {
    std::fprintf(out, "  %-14s %9s\n", name, "-");
    return;
  }
  std::fprintf(out, "  %-14s %9.1f %9.1f %9.1f %9.1f %9.1f %9.1f\n", name, s.mean_s * 1e3,
               s.p50_s * 1e3, s.p90_s * 1e3, s.p95_s * 1e3, s.p99_s * 1e3, s.max_s * 1e3);
}

}  // namespace

ResultWriter::ResultWriter(const std::string& out_dir, std::vector<std::string> tenant_names,
                           bool pool_column)
    : dir_checked_((require_writable_directory(out_dir, "--out"), true)),
      requests_((std::filesystem::path(out_dir) / "requests.csv").string()),
      samples_((std::filesystem::path(out_dir) / "timeseries.csv").string()),
      out_dir_(out_dir),
      tenant_names_(std::move(tenant_names)),
      pool_column_(pool_column),
      exceptions_at_start_(std::uncaught_exceptions()) {
  (void)dir_checked_;
  requests_.stream() << "id,replica,status,arrival_s,first_scheduled_s,first_token_s,finish_s,"
                        "prompt_tokens,output_tokens,cached_prompt_tokens,preemptions,queueing_s,"
                        "ttft_s,tpot_s,e2e_s,step_index,cause,network_s,gateway_s,frontend_s,"
                        "pre_model_s,engine_queue_s,prefill_s,decode_s,stream_s,attempts,"
                        "retry_s,decode_queue_s,kv_transfer_s"
                     << (pool_column_ ? ",pool_s" : "")
                     << (tenant_names_.empty() ? "\n" : ",tenant\n");
  samples_.stream() << "time_s,replica,running,waiting,kv_usage,tokens_in_step,preemptions_total\n";
}

ResultWriter::~ResultWriter() {
  // Unwinding: the run failed, and its half-written files go with it (AtomicFile removes them).
  if (committed_ || std::uncaught_exceptions() > exceptions_at_start_) return;
  try {
    commit();
  } catch (const ConfigError& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
  }
}

void ResultWriter::commit() {
  committed_ = true;
  requests_.commit();
  samples_.commit();
  if (sessions_) sessions_->commit();
  if (session_trace_) session_trace_->commit();
}

void ResultWriter::on_request_done(const RequestRecord& r) {
  auto num = [](double v) { return std::isnan(v) ? std::string() : std::to_string(v); };
  requests_.stream() << r.id << ',' << r.replica << ',' << to_string(r.status) << ','
                     << num(r.arrival_s) << ',' << num(r.first_scheduled_s) << ','
                     << num(r.first_token_s) << ',' << num(r.finish_s) << ',' << r.prompt_tokens
                     << ',' << r.output_tokens << ',' << r.cached_prompt_tokens << ','
                     << r.preemptions << ',' << num(r.queueing_s()) << ',' << num(r.ttft_s()) << ','
                     << num(r.tpot_s()) << ',' << num(r.e2e_s()) << ',' << r.step_index << ','
                     << to_string(r.cause);
  // Where the time went (sums to e2e_s); empty for a request that failed.
  const bool ok = r.status == RequestOutcome::kOk;
  for (Segment s : {Segment::kNetwork, Segment::kGateway, Segment::kFrontend, Segment::kPreModel,
                    Segment::kEngineQueue, Segment::kPrefill, Segment::kDecode, Segment::kStream}) {
    requests_.stream() << ',' << (ok ? num(segment_s(r.segments, s)) : std::string());
  }
  requests_.stream() << ',' << r.attempts;
  for (Segment s : {Segment::kRetry, Segment::kDecodeQueue, Segment::kKvTransfer}) {
    requests_.stream() << ',' << (ok ? num(segment_s(r.segments, s)) : std::string());
  }
  if (pool_column_) {
    requests_.stream() << ',' << (ok ? num(segment_s(r.segments, Segment::kPool)) : std::string());
  }
  if (!tenant_names_.empty()) requests_.stream() << ',' << tenant_names_.at(r.tenant);
  requests_.stream() << '\n';
}

void ResultWriter::on_session_done(const SessionRecord& record) {
  if (!sessions_) {
    const std::string path = (std::filesystem::path(out_dir_) / "sessions.csv").string();
    sessions_ = std::make_unique<AtomicFile>(path);
    sessions_->stream() << session_csv_header() << '\n';
  }
  sessions_->stream() << session_csv_line(record) << '\n';
  if (record.trace_json.empty()) return;
  if (!session_trace_) {
    const std::string path = (std::filesystem::path(out_dir_) / "sessions.jsonl").string();
    session_trace_ = std::make_unique<AtomicFile>(path);
  }
  session_trace_->stream() << record.trace_json << '\n';
}

void ResultWriter::on_sample(const TimeSample& s) {
  samples_.stream() << s.time_s << ',' << s.replica << ',' << s.running << ',' << s.waiting << ','
                    << s.kv_usage << ',' << s.tokens_in_step << ',' << s.preemptions_total << '\n';
}

nlohmann::json summary_json(const MetricsSummary& m) {
  return {{"requests", m.requests},
          {"completed", m.completed},
          {"rejected", m.rejected},
          {"timed_out", m.timed_out},
          {"excluded_warmup", m.excluded_warmup},
          {"input_tokens", m.input_tokens},
          {"output_tokens", m.output_tokens},
          {"preemptions", m.preemptions},
          {"retries", m.retries},
          {"retried_requests", m.retried_requests},
          {"retried_succeeded", m.retried_succeeded},
          {"duration_s", number(m.duration_s)},
          {"request_throughput_per_s", number(m.request_throughput)},
          {"input_tokens_per_s", number(m.input_throughput)},
          {"output_tokens_per_s", number(m.output_throughput)},
          {"total_tokens_per_s", number(m.total_token_throughput)},
          {"output_tokens_per_s_per_gpu", number(m.output_throughput_per_gpu)},
          {"goodput_requests_per_s", number(m.goodput)},
          {"slo_attainment", number(m.slo_attainment)},
          {"error_rate", number(m.error_rate)},
          {"prefix_cache_hit_rate", number(m.prefix_cache_hit_rate)},
          {"cost_per_million_output_tokens_usd", number(m.cost_per_million_output_tokens)},
          {"cost_per_million_tokens_usd", number(m.cost_per_million_tokens)},
          {"ttft", stats_json(m.ttft)},
          {"tpot", stats_json(m.tpot)},
          {"itl", stats_json(m.itl)},
          {"e2e", stats_json(m.e2e)},
          {"queueing", stats_json(m.queueing)},
          {"where_time_went", time_breakdown_json(m.time)}};
}

nlohmann::json steps_json(const std::vector<MetricsSummary>& by_step,
                          const std::vector<int>& clients) {
  nlohmann::json steps = nlohmann::json::array();
  for (size_t i = 0; i < by_step.size(); ++i) {
    nlohmann::json s = summary_json(by_step[i]);
    s["clients"] = clients[i];
    nlohmann::json unstable = nlohmann::json::array();
    for (int percent : unstable_percentiles(by_step[i]))
      unstable.push_back("p" + std::to_string(percent));
    s["unstable_percentiles"] = unstable;
    steps.push_back(s);
  }
  return steps;
}

nlohmann::json replica_json(const ReplicaSummary& r) {
  nlohmann::json ops;
  for (size_t op = 0; op < kNumOps; ++op) {
    ops[std::string(op_name(static_cast<Op>(op)))] = r.op_totals.op_s[op];
  }
  nlohmann::json j = {{"steps", r.steps},
                      {"busy_s", r.busy_s},
                      {"preemptions", r.preemptions},
                      {"prefix_cache_hit_rate", r.prefix_cache_hit_rate},
                      {"evicted_blocks", r.evicted_blocks},
                      {"max_num_seqs", r.max_num_seqs},
                      {"max_num_batched_tokens", r.max_num_batched_tokens},
                      {"peak_running", r.admission.peak_running},
                      {"peak_kv_usage", r.admission.peak_kv_usage},
                      {"waiting_s", r.admission.waiting_s},
                      {"at_max_num_seqs_s", r.admission.at_seq_cap_s},
                      {"at_token_budget_s", r.admission.at_token_budget_s},
                      {"at_kv_limit_s", r.admission.at_kv_limit_s},
                      {"op_seconds", ops}};
  if (r.role != ReplicaRole::kAggregated) {
    j["role"] = r.role == ReplicaRole::kPrefill ? "prefill" : "decode";
  }
  if (r.host_kv.blocks > 0) {
    const HostKvSummary& h = r.host_kv;
    j["kv_offload"] = {{"host_blocks", h.blocks},
                       {"host_hit_tokens", h.hit_tokens},
                       {"host_hit_rate", h.hit_rate()},
                       {"stored_blocks", h.stored_blocks},
                       {"evicted_blocks", h.evicted_blocks},
                       {"bandwidth_GBps", h.bandwidth_Bps / 1e9},
                       {"load_busy_s", h.load_busy_s},
                       {"store_busy_s", h.store_busy_s},
                       {"loaded_bytes_per_gpu", h.loaded_bytes},
                       {"stored_bytes_per_gpu", h.stored_bytes}};
  }
  return j;
}

void print_summary(std::FILE* out, const MetricsSummary& m, std::string_view clock) {
  std::fprintf(out, "  requests: %llu completed, %llu rejected, %llu timed out",
               static_cast<unsigned long long>(m.completed),
               static_cast<unsigned long long>(m.rejected),
               static_cast<unsigned long long>(m.timed_out));
  if (m.excluded_warmup > 0) {
    std::fprintf(out, " (%llu in warm-up left out)",
                 static_cast<unsigned long long>(m.excluded_warmup));
  }
  std::fprintf(out, "; %.1f s %.*s\n", m.duration_s, static_cast<int>(clock.size()), clock.data());
  std::fprintf(
      out,
      "  throughput: %.2f req/s, %.1f input tok/s, %.1f output tok/s (%.1f output tok/s per GPU)\n",
      m.request_throughput, m.input_throughput, m.output_throughput, m.output_throughput_per_gpu);
  std::fprintf(out, "  %-14s %9s %9s %9s %9s %9s %9s\n", "latency (ms)", "mean", "p50", "p90",
               "p95", "p99", "max");
  print_latency_row(out, "TTFT", m.ttft);
  print_latency_row(out, "TPOT", m.tpot);
  print_latency_row(out, "ITL", m.itl);
  print_latency_row(out, "E2E", m.e2e);
  print_latency_row(out, "queueing", m.queueing);
  if (!std::isnan(m.goodput)) {
    std::fprintf(out, "  goodput: %.2f req/s meeting the SLOs (%.1f%% of requests)\n", m.goodput,
                 m.slo_attainment * 100);
  }
  std::fprintf(out, "  prefix cache hit rate %.1f%%, preemptions %llu, error rate %.2f%%",
               std::isnan(m.prefix_cache_hit_rate) ? 0.0 : m.prefix_cache_hit_rate * 100,
               static_cast<unsigned long long>(m.preemptions),
               std::isnan(m.error_rate) ? 0.0 : m.error_rate * 100);
  if (!std::isnan(m.cost_per_million_output_tokens)) {
    std::fprintf(out, ", $%.3f per 1M output tokens", m.cost_per_million_output_tokens);
  }
  std::fprintf(out, "\n");
  if (m.retries > 0) {
    std::fprintf(out, "  retries: %llu, %llu requests retried, %llu of them completed\n",
                 static_cast<unsigned long long>(m.retries),
                 static_cast<unsigned long long>(m.retried_requests),
                 static_cast<unsigned long long>(m.retried_succeeded));
  }
  if (m.time.has_service()) print_time_breakdown(out, m.time);
}

}  // namespace servesim
