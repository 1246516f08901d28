#include "cli/engine_command.h"

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "engine/runtime/backend.h"
#include "engine/runtime/engine.h"
#include "models/catalog.h"
#include "models/config_error.h"
#include "models/json_file.h"
#include "sim/metrics/percentile.h"

namespace servesim {
namespace {

struct BenchPoint {
  int batch = 0;
  int prompt_len = 0;
  double prefill_tokens_per_s = 0;  // median over repeats
  double prefill_step_s = 0;        // median time of the prefill step
  double prefill_flops_per_s = 0;
  double decode_tokens_per_s = 0;  // batch / median decode step
  double decode_step_s = 0;        // median over every decode step of every repeat
  double decode_bytes_per_s = 0;
  // Mean seconds per op of a prefill / decode step over the timed runs (--profile only).
  OpSeconds prefill_op_s{};
  OpSeconds decode_op_s{};
};

// FLOPs of a prefill of `batch` prompts of `len` tokens: the projections (2 per weight per
// token), causal attention (QK^T and PV: 4 * head_dim per query-key pair and head) and the
// LM head of the one sampled row per prompt.
double prefill_flops(const ModelSpec& m, int batch, int len) {
  const double layer_weights =
      static_cast<double>(m.hidden_size) *
          (2.0 * m.num_heads * m.head_dim + 2.0 * m.num_kv_heads * m.head_dim) +
      3.0 * m.hidden_size * m.intermediate_size;
  const double pairs = static_cast<double>(len) * (len + 1) / 2.0;
  return batch * (2.0 * len * layer_weights * m.num_layers +
                  4.0 * m.num_layers * m.num_heads * m.head_dim * pairs +
                  2.0 * m.vocab_size * m.hidden_size);
}

// What the points run on: the backend's weights, shared by one engine per run, and the
// ceilings measured on its hardware.
struct BenchTarget {
  Backend backend = Backend::kCpu;
  std::shared_ptr<const BackendWeights> weights;
  int kv_element_bytes = 4;  // 4 (fp32, CPU) or 2 (bf16, CUDA)
  DeviceCeilings ceilings;   // memory or HBM read bandwidth; Eigen or cuBLAS bf16 GEMM rate
  int gemm_size = 0;         // the square GEMM that rate was measured on
  std::string device;        // the GPU's name; empty on the CPU
};

// Keys and values of one token over all layers, in the backend's cache dtype (fp32 on the
// CPU, bf16 on CUDA).
double kv_bytes_per_token(const ModelSpec& m, int element_bytes) {
  return m.kv_bytes_per_token(element_bytes == 2 ? DType::kBf16 : DType::kFp32, 1);
}

BenchPoint run_point(const BenchTarget& target, const EngineCommandOptions& o, int batch,
                     int prompt_len) {
  const ModelSpec& m = target.weights->spec();
  SchedulerConfig sc;
  sc.max_num_seqs = batch;
  sc.max_num_batched_tokens = std::max(batch * prompt_len, batch);  // one prefill step
  sc.max_model_len = m.max_position_embeddings;
  sc.block_size = 16;
  sc.num_gpu_blocks =
      static_cast<int64_t>(batch) * ((prompt_len + o.gen_len + sc.block_size - 1) / sc.block_size) +
      2;
  sc.enable_prefix_caching = false;
  const EngineOptions eo{sc, o.threads, o.profile, target.backend};

  std::vector<double> prefill_steps, decode_steps;
  OpSeconds prefill_op_sum{}, decode_op_sum{};
  SamplingRng rng(o.seed);
  // Run 0 warms up (page faults in the KV cache and activations, thread wake-up).
  for (int run = 0; run <= o.repeats; ++run) {
    Engine engine(*target.weights, eo);
    for (int b = 0; b < batch; ++b) {
      Request r;
      r.id = static_cast<uint64_t>(b + 1);
      r.max_output_tokens = o.gen_len;
      for (int t = 0; t < prompt_len; ++t) {
        r.prompt_token_ids.push_back(static_cast<int32_t>(rng.next() % m.vocab_size));
      }
      engine.add_request(std::move(r));
    }
    while (engine.has_unfinished()) {
      const StepTrace& t = engine.step();
      if (run == 0) continue;
      const bool prefill = std::any_of(t.sequences.begin(), t.sequences.end(),
                                       [](const StepSequenceTrace& s) { return s.prefill; });
      (prefill ? prefill_steps : decode_steps).push_back(t.end_s - t.start_s);
      OpSeconds& sum = prefill ? prefill_op_sum : decode_op_sum;
      for (size_t i = 0; i < kNumOps; ++i) sum[i] += t.op_s[i];
    }
  }
  BenchPoint p;
  p.batch = batch;
  p.prompt_len = prompt_len;
  p.prefill_step_s = percentile(prefill_steps, 50);
  p.prefill_tokens_per_s = batch * prompt_len / p.prefill_step_s;
  p.prefill_flops_per_s = prefill_flops(m, batch, prompt_len) / p.prefill_step_s;
  for (size_t i = 0; i < kNumOps; ++i) {
    p.prefill_op_s[i] = prefill_op_sum[i] / static_cast<double>(prefill_steps.size());
    if (!decode_steps.empty()) {
      p.decode_op_s[i] = decode_op_sum[i] / static_cast<double>(decode_steps.size());
    }
  }
  if (!decode_steps.empty()) {
    p.decode_step_s = percentile(decode_steps, 50);
    p.decode_tokens_per_s = batch / p.decode_step_s;
    const double mean_context = prompt_len + o.gen_len / 2.0;
    p.decode_bytes_per_s = (static_cast<double>(target.weights->bytes_read_per_step()) +
                            batch * mean_context * kv_bytes_per_token(m, target.kv_element_bytes)) /
                           p.decode_step_s;
  }
  return p;
}

nlohmann::json op_seconds_json(const OpSeconds& op_s) {
  nlohmann::json j = nlohmann::json::object();
  for (size_t i = 0; i < kNumOps; ++i) j[std::string(op_name(static_cast<Op>(i)))] = op_s[i];
  return j;
}

// "qkv 1.23, mlp 4.56, ..." in milliseconds, the ops that took any time.
std::string op_milliseconds_text(const OpSeconds& op_s) {
  std::string text;
  for (size_t i = 0; i < kNumOps; ++i) {
    if (op_s[i] <= 0) continue;
    char buf[64];
    std::snprintf(buf, sizeof buf, "%s%s %.3f", text.empty() ? "" : ", ",
                  std::string(op_name(static_cast<Op>(i))).c_str(), op_s[i] * 1e3);
    text += buf;
  }
  return text;
}

// The backend's one-line errors (unknown name, no CUDA in this build, no device), as the
// bench's.
Backend checked_backend(const EngineCommandOptions& o) {
  try {
    const Backend backend = parse_backend(o.backend);
    require_backend(backend);
    return backend;
  } catch (const ConfigError& e) {
    throw ConfigError(std::string("engine bench: ") + e.what());
  }
}

void check_options(const EngineCommandOptions& o, const ModelSpec& m) {
  if (o.threads < 1) throw ConfigError("--threads must be >= 1");
  if (o.gen_len < 1) throw ConfigError("--gen-len must be >= 1");
  if (o.repeats < 1) throw ConfigError("--repeats must be >= 1");
  if (o.bandwidth_buffer_mib < 1) throw ConfigError("--bandwidth-mib must be >= 1");
  if (o.gemm_size < 1) throw ConfigError("--gemm-size must be >= 1");
  for (int b : o.batches) {
    if (b < 1) throw ConfigError("--batch values must be >= 1");
  }
  for (int p : o.prompt_lens) {
    if (p < 1) throw ConfigError("--prompt-len values must be >= 1");
    if (p + o.gen_len > m.max_position_embeddings) {
      throw ConfigError("--prompt-len " + std::to_string(p) + " plus --gen-len " +
                        std::to_string(o.gen_len) + " exceeds max_model_len " +
                        std::to_string(m.max_position_embeddings) + " of model '" + m.name +
                        "'; shorten the prompt or the generation");
    }
  }
}

// Checkpoints are read on the host (and uploaded as bf16 to a GPU); random weights are drawn
// where they run, so a Llama-3-8B needs no 32 GB of host fp32 for the CUDA bench.
BenchTarget make_target(const EngineCommandOptions& o, Backend backend, const ModelSpec& spec) {
  BenchTarget t;
  t.backend = backend;
  t.weights = load_weights(backend, spec, o.checkpoint, o.seed);
  t.kv_element_bytes = static_cast<int>(dtype_bytes(backend_dtype(backend)));
  CeilingOptions c{.num_threads = o.threads,
                   .read_bytes = o.bandwidth_buffer_mib << 20,
                   .read_repeats = 2 * o.repeats + 1,
                   .gemm_size = o.gemm_size,
                   .gemm_repeats = o.repeats};
  if (backend == Backend::kCuda) {
    t.device = device_name(backend);
    // A GPU needs a far larger GEMM than a CPU to reach its rate: 8192^3 unless --gemm-size.
    if (o.bench->count("--gemm-size") == 0) c.gemm_size = 8192;
    c.gemm_repeats = 2 * o.repeats + 1;
  }
  t.gemm_size = c.gemm_size;
  t.ceilings = measure_ceilings(backend, c);
  return t;
}

int run_bench(const EngineCommandOptions& o) {
  Catalog catalog;
  const ModelSpec spec = catalog.resolve_model(o.model);
  Weights::check_supported(spec);
  const Backend backend = checked_backend(o);
  check_options(o, spec);
  BenchTarget target;
  std::vector<BenchPoint> points;
  // A failing device call (out of device memory, a kernel fault) is reported, not a crash.
  try {
    target = make_target(o, backend, spec);
    for (int b : o.batches) {
      for (int p : o.prompt_lens) points.push_back(run_point(target, o, b, p));
    }
  } catch (const DeviceError& e) {
    throw ConfigError(std::string("engine bench: --backend cuda: ") + e.what());
  }
  const double bandwidth_Bps = target.ceilings.read_bandwidth_Bps;
  const double gemm_flops = target.ceilings.gemm_flops;
  const int64_t num_params = target.weights->num_params();
  const int64_t weight_bytes_per_step = target.weights->bytes_read_per_step();

  if (o.json) {
    nlohmann::json j;
    j["model"] = spec.name;
    j["backend"] = o.backend;
    j["threads"] = o.threads;
    if (!target.device.empty()) j["device"] = target.device;
    j["params"] = num_params;
    j["weight_bytes_read_per_step"] = weight_bytes_per_step;
    j["read_bandwidth_Bps"] = bandwidth_Bps;
    j["gemm_flops"] = gemm_flops;
    j["gemm_size"] = target.gemm_size;
    j["cpu_isa"] = cpu_kernels_isa();
    j["gen_len"] = o.gen_len;
    j["repeats"] = o.repeats;
    nlohmann::json rows = nlohmann::json::array();
    for (const BenchPoint& p : points) {
      rows.push_back({{"batch", p.batch},
                      {"prompt_len", p.prompt_len},
                      {"prefill_tokens_per_s", p.prefill_tokens_per_s},
                      {"prefill_step_s", p.prefill_step_s},
                      {"prefill_flops_per_s", p.prefill_flops_per_s},
                      {"prefill_fraction_of_gemm", p.prefill_flops_per_s / gemm_flops},
                      {"decode_tokens_per_s", p.decode_tokens_per_s},
                      {"decode_step_s", p.decode_step_s},
                      {"decode_bytes_per_s", p.decode_bytes_per_s},
                      {"decode_fraction_of_bandwidth", p.decode_bytes_per_s / bandwidth_Bps}});
      if (o.profile) {
        rows.back()["prefill_op_s"] = op_seconds_json(p.prefill_op_s);
        rows.back()["decode_op_s"] = op_seconds_json(p.decode_op_s);
      }
    }
    j["points"] = std::move(rows);
    std::cout << json_text(j) << "\n";
    return 0;
  }
  if (target.device.empty()) {
    std::printf(
        "engine bench: %s (%.1f M params, %.1f MB of fp32 weights read per decode step), "
        "backend cpu, threads %d, kernels %s\n",
        spec.name.c_str(), num_params / 1e6, weight_bytes_per_step / 1e6, o.threads,
        cpu_kernels_isa());
    std::printf(
        "machine: memory read %.2f GB/s (%lld MiB buffer), Eigen GEMM %.1f GFLOP/s "
        "(%d^3); medians of repeated runs\n\n",
        bandwidth_Bps / 1e9, static_cast<long long>(o.bandwidth_buffer_mib), gemm_flops / 1e9,
        target.gemm_size);
  } else {
    std::printf(
        "engine bench: %s (%.1f M params, %.1f MB of bf16 weights read per decode step), "
        "backend cuda, %s\n",
        spec.name.c_str(), num_params / 1e6, weight_bytes_per_step / 1e6, target.device.c_str());
    std::printf(
        "device: HBM read %.2f GB/s (%lld MiB buffer), cuBLAS bf16 GEMM %.1f GFLOP/s "
        "(%d^3); medians of repeated runs\n\n",
        bandwidth_Bps / 1e9, static_cast<long long>(o.bandwidth_buffer_mib), gemm_flops / 1e9,
        target.gemm_size);
  }
  std::printf("prefill (one step of batch x prompt tokens)\n");
  std::printf("%6s %7s %12s %10s %9s %7s\n", "batch", "prompt", "tokens/s", "ms/step", "GFLOP/s",
              "%GEMM");
  for (const BenchPoint& p : points) {
    std::printf("%6d %7d %12.1f %10.2f %9.1f %6.1f%%\n", p.batch, p.prompt_len,
                p.prefill_tokens_per_s, p.prefill_step_s * 1e3, p.prefill_flops_per_s / 1e9,
                100.0 * p.prefill_flops_per_s / gemm_flops);
  }
  std::printf("\ndecode (%d steps after the prompt; bytes = weights + KV read per step)\n",
              o.gen_len - 1);
  std::printf("%6s %7s %12s %10s %9s %7s\n", "batch", "context", "tokens/s", "ms/step", "GB/s",
              "%BW");
  for (const BenchPoint& p : points) {
    if (p.decode_step_s == 0) continue;
    std::printf("%6d %7d %12.1f %10.2f %9.2f %6.1f%%\n", p.batch, p.prompt_len,
                p.decode_tokens_per_s, p.decode_step_s * 1e3, p.decode_bytes_per_s / 1e9,
                100.0 * p.decode_bytes_per_s / bandwidth_Bps);
  }
  if (o.profile) {
    std::printf("\nper-op time, ms per step (mean of the timed runs)\n");
    for (const BenchPoint& p : points) {
      std::printf("batch %d, prompt %d, prefill: %s\n", p.batch, p.prompt_len,
                  op_milliseconds_text(p.prefill_op_s).c_str());
      if (p.decode_step_s > 0) {
        std::printf("batch %d, prompt %d, decode: %s\n", p.batch, p.prompt_len,
                    op_milliseconds_text(p.decode_op_s).c_str());
      }
    }
  }
  return 0;
}

}  // namespace

CLI::App* add_engine_command(CLI::App& app, EngineCommandOptions& o) {
  CLI::App* engine = app.add_subcommand("engine", "servesim's built-in inference engine");
  engine->require_subcommand(1);
  CLI::App* bench = engine->add_subcommand(
      "bench", "Prefill and decode throughput of the engine against this machine's roofline");
  o.bench = bench;
  bench->add_option("--model", o.model, "Catalog name or model JSON")->capture_default_str();
  bench->add_option("--backend", o.backend, "cpu or cuda")->capture_default_str();
  bench->add_option("--checkpoint", o.checkpoint,
                    "Hugging Face .safetensors file(s); default: seeded random weights");
  bench->add_option("--threads", o.threads, "CPU threads")->capture_default_str();
  bench
      ->add_option("--prompt-len", o.prompt_lens,
                   "Prompt lengths, tokens (list: 128 512 or 128,512)")
      ->delimiter(',')
      ->capture_default_str();
  bench->add_option("--gen-len", o.gen_len, "Tokens generated per request")->capture_default_str();
  bench->add_option("--batch", o.batches, "Batch sizes, requests at once (list: 1 64 or 1,64)")
      ->delimiter(',')
      ->capture_default_str();
  bench->add_option("--repeats", o.repeats, "Timed runs per point (after a warm-up)")
      ->capture_default_str();
  bench->add_option("--seed", o.seed, "Seed of the weights and prompts")->capture_default_str();
  bench->add_option("--bandwidth-mib", o.bandwidth_buffer_mib, "Buffer of the bandwidth test")
      ->capture_default_str();
  bench->add_option("--gemm-size", o.gemm_size, "Square GEMM of the rate test")
      ->capture_default_str();
  bench->add_flag("--json", o.json, "Print JSON");
  bench->add_flag("--profile", o.profile,
                  "Also time each op (clock reads on the CPU, CUDA events on a GPU)");
  add_engine_run_command(*engine, o.run);
  add_engine_serve_command(*engine, o.serve);
  return engine;
}

int run_engine_command(const EngineCommandOptions& o) {
  if (o.bench != nullptr && *o.bench) return run_bench(o);
  if (o.run.command != nullptr && *o.run.command) return run_engine_run(o.run);
  if (o.serve.command != nullptr && *o.serve.command) return run_engine_serve(o.serve);
  return 0;
}

}  // namespace servesim
