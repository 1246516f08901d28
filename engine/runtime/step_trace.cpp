#include "engine/runtime/step_trace.h"

#include <nlohmann/json.hpp>

namespace servesim {

std::string StepTrace::to_json_line() const {
  nlohmann::json j;
  j["step"] = step;
  j["start_s"] = start_s;
  j["end_s"] = end_s;
  j["preempted"] = num_preempted;
  nlohmann::json seqs = nlohmann::json::array();
  for (const StepSequenceTrace& s : sequences) {
    seqs.push_back({{"id", s.request_id},
                    {"new", s.new_tokens},
                    {"ctx", s.context_tokens},
                    {"prefill", s.prefill},
                    {"token", s.token}});
  }
  j["seqs"] = std::move(seqs);
  if (profiled) {
    nlohmann::json ops = nlohmann::json::object();
    for (size_t i = 0; i < kNumOps; ++i) {
      if (static_cast<Op>(i) == Op::kComm) continue;  // one device: no communication
      ops[std::string(op_name(static_cast<Op>(i)))] = op_s[i];
    }
    j["ops_s"] = std::move(ops);
  }
  return j.dump();
}

}  // namespace servesim
