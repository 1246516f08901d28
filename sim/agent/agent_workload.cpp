#include "sim/agent/agent_workload.h"

#include "models/config_error.h"
#include "sim/agent/agent_source.h"

namespace servesim {
namespace {

// An AgentSource that owns the spec it runs.
class OwningAgentSource final : public RequestSource {
 public:
  OwningAgentSource(const WorkloadSpec& workload, AgentSpec spec, Observer& observer)
      : spec_(std::move(spec)), source_(workload, spec_, observer) {}

  std::optional<double> next_arrival_s() override { return source_.next_arrival_s(); }
  RequestSpec pop() override { return source_.pop(); }
  void on_request_done(const RequestSpec& r, double now_s) override {
    source_.on_request_done(r, now_s);
  }
  void on_request_left(const RequestSpec& r, const RequestRecord& record, double now_s) override {
    source_.on_request_left(r, record, now_s);
  }
  void advance_to(double now_s) override { source_.advance_to(now_s); }
  bool finished() override { return source_.finished(); }
  uint64_t expected_total() const override { return 0; }

  const AgentSource& source() const { return source_; }

 private:
  AgentSpec spec_;
  AgentSource source_;
};

}  // namespace

AgentSpec parse_agent_workload(const WorkloadSpec& workload, const AgentLimits& limits) {
  AgentSpec spec =
      AgentSpec::from_json(workload.agent, "workload.agent", workload.agent_base_dir, limits);
  if (!spec.trace.empty() && spec.trace_recorded_starts && workload.agent_closed_loop) {
    throw ConfigError(
        "workload.agent.trace_start: \"recorded\" starts each session at its recorded time, "
        "which closed-loop users cannot; set \"trace_start\": \"arrival\" or an open-loop "
        "arrival");
  }
  return spec;
}

std::unique_ptr<RequestSource> make_simulation_source(const WorkloadSpec& workload,
                                                      const AgentLimits& limits,
                                                      Observer& observer) {
  if (workload.kind != WorkloadKind::kAgent) return make_request_source(workload);
  return std::make_unique<OwningAgentSource>(workload, parse_agent_workload(workload, limits),
                                             observer);
}

std::optional<SessionSummary> session_summary_of(const RequestSource& source) {
  if (const auto* agent = dynamic_cast<const OwningAgentSource*>(&source)) {
    return agent->source().metrics().summary();
  }
  if (const auto* agent = dynamic_cast<const AgentSource*>(&source)) {
    return agent->metrics().summary();
  }
  return std::nullopt;
}

}  // namespace servesim
