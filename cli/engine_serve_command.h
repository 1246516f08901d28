// `servesim engine serve [--model NAME|FILE] [--port N] ...`: an OpenAI-compatible HTTP server
// (serve/server/openai_server.h) on servesim's engine, with vLLM's flag names for the model and
// the scheduler (--model, --served-model-name, --max-num-seqs, --max-num-batched-tokens,
// --max-model-len, --block-size, --enable-prefix-caching, --host, --port, --seed) and
// `engine run`'s for the engine itself (--backend, --checkpoint, --threads, --num-blocks,
// --kv-cache-mib, --force). Prints "servesim engine serve: listening on http://HOST:PORT" on
// stderr once it accepts connections and serves until SIGINT or SIGTERM. docs/serve.md.
// Not thread-safe (CLI process).
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>
#include <vector>

namespace servesim {

struct ServeCommandOptions {
  CLI::App* command = nullptr;  // the `engine serve` subcommand, once added
  std::string model = "Llama-100M-bench";
  std::string served_model_name;  // "": the --model argument, as vLLM
  std::string backend = "cpu";
  std::vector<std::string> checkpoint;  // .safetensors shards; empty: seeded random weights
  // A SentencePiece tokenizer.model, or a folder holding one; "": the checkpoint's folder's,
  // else servesim-byte.
  std::string tokenizer;
  int threads = 1;
  uint64_t seed = 0;
  int max_num_seqs = 256;
  int max_num_batched_tokens = 2048;
  int max_model_len = 0;  // tokens; 0: the model's max_position_embeddings
  int block_size = 16;
  bool enable_prefix_caching = true;  // vLLM V1's default
  int64_t num_blocks = 0;             // KV blocks; 0: from kv_cache_mib or the default budget
  int64_t kv_cache_mib = 0;           // MiB; 0: max_num_seqs x max_model_len, at most 1024 MiB
  bool force = false;
  std::string host = "127.0.0.1";
  int port = 8000;
  int http_threads = 1;
  int64_t max_body_bytes = int64_t{1} << 20;
  int max_connections = 1024;
  int64_t max_stream_buffer_bytes = int64_t{1} << 20;
  double keep_alive_timeout_s = 60;
};

// Adds `serve` to the `engine` subcommand.
CLI::App* add_engine_serve_command(CLI::App& engine, ServeCommandOptions& options);

// Throws ConfigError for bad input; serves until a signal; returns the process exit code.
int run_engine_serve(const ServeCommandOptions& options);

}  // namespace servesim
