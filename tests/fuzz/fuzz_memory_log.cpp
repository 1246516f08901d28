// libFuzzer target: a vLLM start-up log carried through what `servesim memory --model
// Llama-3-8B --gpu H100-SXM --from-log vllm.log --fit` does with it — the deployment the log
// states (deployment_from_log), servesim's memory plan for it, the term-by-term comparison
// (JSON and table) and the fit of the overhead terms. The model and GPU are fixed so that each
// input costs a parse, not a catalog search. Only ConfigError may escape; every figure compared
// must be finite, and a fit must leave a non-negative overhead.
#include <cmath>
#include <nlohmann/json.hpp>
#include <sstream>

#include "calibration/measured/memory_log_comparison.h"
#include "models/catalog.h"
#include "tests/fuzz/fuzz_input.h"
#include "tests/fuzz/startup_log_check.h"

namespace {

void compare_and_fit(const servesim::VllmStartupLog& log) {
  using servesim::fuzz::expect;
  static const servesim::Catalog catalog(SERVESIM_SOURCE_DIR "/configs");
  static const servesim::ModelSpec model = catalog.resolve_model("Llama-3-8B");
  static const servesim::HardwareSpec gpu = catalog.resolve_gpu("H100-SXM");
  servesim::ParallelConfig parallel;
  servesim::EngineConfig engine;
  servesim::deployment_from_log(log, servesim::GivenSettings{}, parallel, engine);
  parallel.validate(model);
  engine.resolved_for(model, gpu).validate(model);
  const auto plan = servesim::MemoryPlan::compute_unchecked(model, gpu, parallel, engine);
  const auto comparison = servesim::MemoryLogComparison::compare(log, plan);
  for (const auto& term : comparison.terms) {
    expect(std::isfinite(term.servesim) && (!term.log || std::isfinite(*term.log)),
           "a compared term that is not finite");
  }
  const auto error = comparison.kv_tokens_error();
  expect(!error || std::isfinite(*error), "a KV-token error that is not finite");
  (void)comparison.to_json().dump();
  (void)comparison.to_table();
  const auto fit = servesim::MemoryLogFit::fit(log, model, gpu, parallel, engine);
  expect(fit.non_torch_bytes >= 0, "a fit with a negative overhead");
  (void)fit.to_json().dump();
  (void)fit.to_text();
}

}  // namespace

// The parser's line patterns (std::regex, slow to build under the sanitizers) are built once
// here, before libFuzzer times the first input.
extern "C" int LLVMFuzzerInitialize(int*, char***) {
  std::istringstream empty;
  servesim::fuzz::run_or_reject([&] { servesim::VllmStartupLog::parse(empty, "warm-up"); });
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return servesim::fuzz::run_or_reject([&] {
    std::istringstream in(servesim::fuzz::as_text(data, size));
    const servesim::VllmStartupLog log = servesim::VllmStartupLog::parse(in, "vllm.log");
    servesim::fuzz::check_startup_log(log);
    compare_and_fit(log);
  });
}
