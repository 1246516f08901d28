// servesim: the command-line front end. One subcommand per job; every user error is printed
// as a single "error: ..." line with exit status 2.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>

#include "base/build_info.h"
#include "cli/calibrate_command.h"
#include "cli/compare_command.h"
#include "cli/engine_command.h"
#include "cli/loadtest_command.h"
#include "cli/memory_command.h"
#include "cli/plan_command.h"
#include "cli/simulate_command.h"
#include "cli/sweep_command.h"
#include "engine/runtime/backend.h"
#include "models/catalog.h"
#include "models/config_error.h"
#include "models/json_file.h"

namespace servesim {
namespace {

void print_models(const Catalog& catalog, bool json) {
  nlohmann::json out = nlohmann::json::array();
  if (!json) {
    std::printf("%-18s %-13s %9s %9s %7s %5s %5s %9s %12s\n", "model", "family", "params_B",
                "active_B", "layers", "heads", "kv", "max_len", "kv_B/token");
  }
  for (const ModelSpec& m : catalog.models()) {
    const double kv = m.kv_bytes_per_token(DType::kBf16, 1);
    if (json) {
      nlohmann::json j = m.to_json();
      j["params_total"] = m.total_params();
      j["params_active"] = m.active_params();
      j["kv_bytes_per_token_bf16"] = kv;
      out.push_back(j);
    } else {
      std::printf("%-18s %-13s %9.2f %9.2f %7d %5d %5d %9d %12.0f\n", m.name.c_str(),
                  m.family.c_str(), static_cast<double>(m.total_params()) / 1e9,
                  static_cast<double>(m.active_params()) / 1e9, m.num_layers, m.num_heads,
                  m.num_kv_heads, m.max_position_embeddings, kv);
    }
  }
  if (json) std::cout << json_text(out) << "\n";
}

void print_gpus(const Catalog& catalog, bool json) {
  nlohmann::json out = nlohmann::json::array();
  if (!json) {
    std::printf("%-16s %8s %9s %8s %9s %8s %8s %7s\n", "gpu", "mem_GB", "total_GiB", "HBM_TB/s",
                "bf16_TF", "fp8_TF", "NVL_GB/s", "$/hour");
  }
  for (const HardwareSpec& h : catalog.gpus()) {
    if (json) {
      out.push_back(h.to_json());
    } else {
      std::printf("%-16s %8.0f %9.2f %8.2f %9.1f %8.1f %8.0f %7.2f\n", h.name.c_str(), h.memory_gb,
                  h.memory_total_gib(), h.memory_bandwidth_Bps / 1e12, h.peak_bf16_flops / 1e12,
                  h.peak_fp8_flops / 1e12, h.nvlink_Bps / 1e9, h.price_per_hour_usd);
    }
  }
  if (json) std::cout << json_text(out) << "\n";
}

}  // namespace
}  // namespace servesim

int main(int argc, char** argv) {
  using namespace servesim;
  CLI::App app{"servesim: capacity planner and performance simulator for LLM serving"};
  app.require_subcommand(1);
  app.set_version_flag("--version", [] {
    return "servesim " + servesim_version() + " (git " + servesim_git_revision() +
           "), CPU kernels " + cpu_kernels_summary();
  });

  bool json = false;
  MemoryCommandOptions memory_options;
  CLI::App* memory = add_memory_command(app, memory_options);

  SimulateOptions simulate_options;
  CLI::App* simulate = add_simulate_command(app, simulate_options);

  EngineCommandOptions engine_options;
  CLI::App* engine = add_engine_command(app, engine_options);
  SweepCommandOptions sweep_options;
  CLI::App* sweep = add_sweep_command(app, sweep_options);
  PlanCommandOptions plan_options;
  CLI::App* plan = add_plan_command(app, plan_options);
  CalibrateCommandOptions calibrate_options;
  CLI::App* calibrate = add_calibrate_command(app, calibrate_options);
  LoadtestCommandOptions loadtest_options;
  CLI::App* loadtest = add_loadtest_command(app, loadtest_options);
  CompareCommandOptions compare_options;
  CLI::App* compare = add_compare_command(app, compare_options);

  CLI::App* models = app.add_subcommand("models", "List the bundled models");
  models->add_flag("--json", json, "Print JSON");
  std::string checkpoint;
  models->add_option("--resolve", checkpoint,
                     "Print the catalog model a served checkpoint's name or Hugging Face id is "
                     "(e.g. Qwen/Qwen3-235B-A22B-FP8), or fail in one line");
  CLI::App* gpus = app.add_subcommand("gpus", "List the bundled GPUs");
  gpus->add_flag("--json", json, "Print JSON");

  try {
    app.parse(argc, argv);
    Catalog catalog;
    if (*memory) {
      return run_memory_command(memory_options);
    } else if (*simulate) {
      return run_simulate(simulate_options);
    } else if (*engine) {
      return run_engine_command(engine_options);
    } else if (*sweep) {
      return run_sweep_command(sweep_options);
    } else if (*plan) {
      return run_plan_command(plan_options);
    } else if (*calibrate) {
      return run_calibrate_command(calibrate_options);
    } else if (*loadtest) {
      return run_loadtest_command(loadtest_options);
    } else if (*compare) {
      return run_compare_command(compare_options);
    } else if (*models && !checkpoint.empty()) {
      std::printf("%s\n", catalog.resolve_checkpoint_name(checkpoint).name.c_str());
    } else if (*models) {
      print_models(catalog, json);
    } else if (*gpus) {
      print_gpus(catalog, json);
    }
  } catch (const CLI::ParseError& e) {
    // --help and --version arrive as exceptions too, and succeed.
    if (e.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success)) return app.exit(e);
    // A flag that does not parse is bad input like any other: one line and status 2.
    std::cerr << "error: " << e.what() << " (--help lists the options)\n";
    return 2;
  } catch (const ConfigError& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 2;
  } catch (const std::runtime_error& e) {
    // E.g. a SERVESIM_CPU_ISA this CPU cannot run: one line, not an abort.
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
