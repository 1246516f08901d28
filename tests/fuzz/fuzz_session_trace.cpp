// libFuzzer target: a JSONL session trace (sim/agent/session_trace.h) read whole as an agent
// workload's "trace" reads it. Only ConfigError (a bad line, named file:line) may escape, and a
// trace that reads must hold together: every call waits only for earlier calls, and an LLM
// call's blocks fit its tokens.
#include <cstdlib>

#include "sim/agent/session_trace.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static servesim::fuzz::ScratchFile file(".jsonl");
  const std::string& path = file.write(data, size);
  return servesim::fuzz::run_or_reject([&] {
    for (const servesim::TracedSession& s : servesim::read_session_trace(path)) {
      for (size_t c = 0; c < s.calls.size(); ++c) {
        const servesim::TraceCall& call = s.calls[c];
        for (int dep : call.after) {
          if (dep < 0 || static_cast<size_t>(dep) >= c) std::abort();
        }
        const size_t blocks = call.prompt_blocks.size() + call.output_blocks.size();
        const auto tokens = static_cast<size_t>(call.input_tokens + call.output_tokens);
        if (blocks * servesim::kTraceBlockTokens > tokens) std::abort();
      }
    }
  });
}
