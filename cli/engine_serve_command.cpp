#include "cli/engine_serve_command.h"

#include <pthread.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <memory>

#include "base/build_info.h"
#include "engine/realtime/engine_server.h"
#include "engine/runtime/backend.h"
#include "engine/runtime/engine.h"
#include "engine/runtime/kv_cache_size.h"
#include "models/catalog.h"
#include "models/config_error.h"
#include "serve/server/byte_tokenizer.h"
#include "serve/server/openai_server.h"
#include "serve/server/sentencepiece_tokenizer.h"

namespace servesim {
namespace {

SchedulerConfig scheduler_config(const ServeCommandOptions& o, const ModelSpec& m,
                                 Backend backend) {
  SchedulerConfig sc;
  sc.max_num_seqs = o.max_num_seqs;
  sc.max_num_batched_tokens = o.max_num_batched_tokens;
  sc.max_model_len = o.max_model_len > 0 ? o.max_model_len : m.max_position_embeddings;
  if (sc.max_model_len > m.max_position_embeddings) {
    // vLLM refuses a --max-model-len beyond the model's derived one the same way.
    throw ConfigError("--max-model-len " + std::to_string(sc.max_model_len) +
                      " is greater than the derived max_model_len " +
                      std::to_string(m.max_position_embeddings) + " of model '" + m.name + "'");
  }
  sc.block_size = o.block_size;
  sc.enable_prefix_caching = o.enable_prefix_caching;
  sc.num_gpu_blocks =
      size_kv_cache_blocks(sc, m, backend_dtype(backend), o.num_blocks, o.kv_cache_mib);
  sc.validate();
  return sc;
}

ServeOptions serve_options(const ServeCommandOptions& o) {
  if (o.port < 0 || o.port > 65535) throw ConfigError("--port must be in 0..65535");
  ServeOptions s;
  s.host = o.host;
  s.port = static_cast<uint16_t>(o.port);
  s.served_model_name = o.served_model_name.empty() ? o.model : o.served_model_name;
  s.model_root = o.model;
  s.version = servesim_version();
  s.num_http_threads = o.http_threads;
  s.max_body_bytes = o.max_body_bytes;
  s.max_connections = o.max_connections;
  s.max_stream_buffer_bytes = o.max_stream_buffer_bytes;
  s.keep_alive_timeout_s = o.keep_alive_timeout_s;
  return s;
}

std::unique_ptr<Engine> build_engine(const ServeCommandOptions& o, const ModelSpec& spec,
                                     Backend backend, const SchedulerConfig& sc) {
  if (backend == Backend::kCpu && spec.total_params() > EngineServeOptions::kMaxParams &&
      !o.force) {
    throw ConfigError("model '" + spec.name + "' has " +
                      std::to_string(spec.total_params() / 1'000'000) +
                      " M parameters, too many for the CPU engine; use a small model such as "
                      "Llama-100M-bench, or pass --force");
  }
  if (o.threads < 1) throw ConfigError("--threads must be >= 1");
  try {
    const std::shared_ptr<const BackendWeights> weights =
        load_weights(backend, spec, o.checkpoint, o.seed);
    auto engine = std::make_unique<Engine>(*weights, EngineOptions{sc, o.threads, false, backend});
    // As vLLM's start-up profile run: the first request does not pay for buffer growth.
    engine->warm_up();
    return engine;
  } catch (const DeviceError& e) {
    throw ConfigError(std::string("engine serve: --backend cuda: ") + e.what());
  }
}

// The tokenizer text prompts go through, as vLLM picks it: --tokenizer, else the model's folder
// (here the checkpoint's), else servesim-byte. A folder whose only tokenizer servesim cannot read
// says so rather than silently tokenizing by bytes.
std::shared_ptr<const Tokenizer> pick_tokenizer(const ServeCommandOptions& o,
                                                const ModelSpec& spec) {
  if (!o.tokenizer.empty()) return SentencePieceTokenizer::load(o.tokenizer, spec.vocab_size);
  if (!o.checkpoint.empty()) {
    namespace fs = std::filesystem;
    const fs::path folder = fs::path(o.checkpoint.front()).parent_path();
    std::error_code ec;
    if (fs::exists(folder / "tokenizer.model", ec)) {
      return SentencePieceTokenizer::load((folder / "tokenizer.model").string(), spec.vocab_size);
    }
    if (fs::exists(folder / "tokenizer.json", ec)) {
      std::fprintf(stderr,
                   "servesim engine serve: %s is a Hugging Face tokenizer.json, which servesim "
                   "cannot read (no Debian package has the tokenizers library): text prompts "
                   "use servesim-byte; send token ids for the model's own tokens\n",
                   (folder / "tokenizer.json").string().c_str());
    }
  }
  return std::make_shared<ByteTokenizer>(spec.vocab_size);
}

// SIGINT and SIGTERM are blocked in every thread and taken here, so no handler runs inside
// the engine or Asio.
int wait_for_signal(const sigset_t& signals) {
  int signal = 0;
  sigwait(&signals, &signal);
  return signal;
}

}  // namespace

CLI::App* add_engine_serve_command(CLI::App& engine, ServeCommandOptions& o) {
  CLI::App* serve = engine.add_subcommand(
      "serve",
      "OpenAI-compatible HTTP server (/v1/completions, /v1/chat/completions) on the engine");
  o.command = serve;
  serve->add_option("--model", o.model, "Catalog name or model JSON")->capture_default_str();
  serve->add_option("--served-model-name", o.served_model_name,
                    "The model name in the API (default: --model)");
  serve->add_option("--backend", o.backend, "cpu or cuda")->capture_default_str();
  serve->add_option("--checkpoint", o.checkpoint,
                    "Hugging Face .safetensors file(s); default: seeded random weights");
  serve->add_option("--tokenizer", o.tokenizer,
                    "SentencePiece tokenizer.model, or a folder holding one (default: beside "
                    "--checkpoint, else servesim's byte tokenizer)");
  serve->add_option("--threads", o.threads, "CPU threads of the engine")->capture_default_str();
  serve->add_option("--seed", o.seed, "Seed of the random weights")->capture_default_str();
  serve->add_option("--max-num-seqs", o.max_num_seqs, "Sequences per step")->capture_default_str();
  serve->add_option("--max-num-batched-tokens", o.max_num_batched_tokens, "Token budget per step")
      ->capture_default_str();
  serve->add_option("--max-model-len", o.max_model_len,
                    "Longest prompt + output, tokens (default: the model's)");
  serve->add_option("--block-size", o.block_size, "Tokens per KV block")->capture_default_str();
  serve->add_flag("--enable-prefix-caching,!--no-enable-prefix-caching", o.enable_prefix_caching,
                  "Reuse KV blocks of shared prompt prefixes (default: on)");
  serve->add_option("--num-blocks", o.num_blocks, "KV-cache blocks (block 0 reserved)");
  serve->add_option("--kv-cache-mib", o.kv_cache_mib,
                    "KV-cache budget in MiB (default: max_num_seqs x max_model_len, at most 1024)");
  serve->add_flag("--force", o.force, "Run a model above 2 B parameters on the CPU anyway");
  serve->add_option("--host", o.host, "Address to listen on")->capture_default_str();
  serve->add_option("--port", o.port, "Port (0: any free port)")->capture_default_str();
  serve->add_option("--http-threads", o.http_threads, "Threads serving HTTP")
      ->capture_default_str();
  serve->add_option("--max-request-body-bytes", o.max_body_bytes, "Larger bodies get 413")
      ->capture_default_str();
  serve->add_option("--max-connections", o.max_connections, "Further connections get 503")
      ->capture_default_str();
  serve
      ->add_option("--max-stream-buffer-bytes", o.max_stream_buffer_bytes,
                   "Output a client leaves unread past which its request is aborted")
      ->capture_default_str();
  serve
      ->add_option("--keep-alive-timeout", o.keep_alive_timeout_s,
                   "Seconds an idle connection stays open")
      ->capture_default_str();
  return serve;
}

int run_engine_serve(const ServeCommandOptions& o) {
  const Backend backend = parse_backend(o.backend);
  require_backend(backend);
  Catalog catalog;
  const ModelSpec spec = catalog.resolve_model(o.model);
  Weights::check_supported(spec);
  const SchedulerConfig sc = scheduler_config(o, spec, backend);
  const ServeOptions so = serve_options(o);
  OpenAiServer::check_can_listen(so);
  std::shared_ptr<const Tokenizer> tokenizer = pick_tokenizer(o, spec);
  std::unique_ptr<Engine> engine = build_engine(o, spec, backend, sc);

  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);  // before any thread starts: they inherit it

  const std::string tokenizer_name = tokenizer->description();
  OpenAiServer server(std::move(engine), so, std::move(tokenizer));
  std::fprintf(stderr,
               "servesim engine serve: %s on the %s backend, %d thread%s; KV cache %lld blocks "
               "of %d tokens; max_model_len %d, max_num_seqs %d, max_num_batched_tokens %d, "
               "prefix caching %s; tokenizer %s\n",
               spec.name.c_str(), backend_name(backend), o.threads, o.threads == 1 ? "" : "s",
               static_cast<long long>(sc.num_gpu_blocks - 1), sc.block_size, sc.max_model_len,
               sc.max_num_seqs, sc.max_num_batched_tokens, sc.enable_prefix_caching ? "on" : "off",
               tokenizer_name.c_str());
  std::fprintf(stderr, "servesim engine serve: listening on http://%s:%d\n", so.host.c_str(),
               server.port());
  const int signal = wait_for_signal(signals);
  std::fprintf(stderr, "servesim engine serve: %s, shutting down\n",
               signal == SIGINT ? "SIGINT" : "SIGTERM");
  server.stop(0.5);
  return 0;
}

}  // namespace servesim
