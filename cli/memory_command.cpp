#include "cli/memory_command.h"

#include <iostream>
#include <nlohmann/json.hpp>

#include "calibration/measured/memory_log_comparison.h"
#include "models/catalog.h"
#include "models/config_error.h"
#include "models/json_file.h"
#include "models/memory_plan.h"

namespace servesim {
namespace {

bool given(const MemoryCommandOptions& o, const char* flag) {
  return o.command->get_option(flag)->count() > 0;
}

GivenSettings given_settings(const MemoryCommandOptions& o) {
  GivenSettings g;
  g.tp = given(o, "--tensor-parallel-size");
  g.pp = given(o, "--pipeline-parallel-size");
  g.dtype = given(o, "--dtype");
  g.kv_cache_dtype = given(o, "--kv-cache-dtype");
  g.max_model_len = given(o, "--max-model-len");
  g.gpu_memory_utilization = given(o, "--gpu-memory-utilization");
  g.max_num_seqs = given(o, "--max-num-seqs");
  g.max_num_batched_tokens = given(o, "--max-num-batched-tokens");
  g.block_size = given(o, "--block-size");
  g.enforce_eager = given(o, "--enforce-eager");
  g.enable_chunked_prefill = given(o, "--enable-chunked-prefill");
  g.vllm_version = given(o, "--vllm-version");
  g.gpu_memory_bytes = given(o, "--gpu-memory-bytes");
  return g;
}

int run_from_log(const MemoryCommandOptions& o, const Catalog& catalog) {
  const VllmStartupLog log = VllmStartupLog::read_file(o.from_log);
  DeploymentOptions flags = o.deployment;
  // Catalog names resolve back to the model they name.
  if (flags.model.empty()) flags.model = model_named_in_log(log, catalog).name;
  DeploymentOptions::Resolved d = flags.resolve(catalog);
  deployment_from_log(log, given_settings(o), d.parallel, d.engine);
  d.parallel.validate(d.model);
  d.engine.resolved_for(d.model, d.gpu).validate(d.model);
  const MemoryPlan plan = MemoryPlan::compute_unchecked(d.model, d.gpu, d.parallel, d.engine);
  const MemoryLogComparison comparison = MemoryLogComparison::compare(log, plan);
  std::optional<MemoryLogFit> fit;
  if (o.fit) fit = MemoryLogFit::fit(log, d.model, d.gpu, d.parallel, d.engine);
  if (o.json) {
    nlohmann::json j = comparison.to_json();
    if (fit) j["fit"] = fit->to_json();
    std::cout << json_text(j) << "\n";
  } else {
    std::cout << comparison.to_table();
    if (fit) std::cout << fit->to_text();
  }
  return 0;
}

}  // namespace

CLI::App* add_memory_command(CLI::App& app, MemoryCommandOptions& options) {
  CLI::App* memory = app.add_subcommand(
      "memory", "Per-GPU memory budget and KV-cache capacity, as vLLM computes them at start-up");
  options.deployment.add_to(*memory, false);
  memory->add_flag("--json", options.json, "Print JSON instead of a table");
  memory->add_option("--from-log", options.from_log,
                     "A vLLM start-up log: compare servesim's budget with it term by term "
                     "(the log gives the deployment; flags override it)");
  memory->add_flag("--fit", options.fit,
                   "With --from-log: fit non-torch, activation and CUDA-graph memory to the "
                   "log's KV figure and print the engine keys");
  options.command = memory;
  return memory;
}

int run_memory_command(const MemoryCommandOptions& o) {
  const Catalog catalog;
  if (o.fit && o.from_log.empty()) throw ConfigError("--fit needs --from-log vllm.log");
  if (!o.from_log.empty()) return run_from_log(o, catalog);
  if (o.deployment.model.empty()) {
    throw ConfigError("--model is required (or --from-log with a vLLM start-up log)");
  }
  const DeploymentOptions::Resolved d = o.deployment.resolve(catalog);
  const std::vector<HardwareSpec> catalog_gpus = catalog.gpus();
  const MemoryPlan plan = MemoryPlan::compute(d.model, d.gpu, d.parallel, d.engine, &catalog_gpus);
  std::cout << (o.json ? json_text(plan.to_json()) + "\n" : plan.to_table());
  return 0;
}

}  // namespace servesim
