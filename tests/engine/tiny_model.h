// A tiny Llama-shaped model for engine tests: small enough for an fp64 reference and for
// sanitizer builds, with GQA (4 query heads over 2 KV heads) and an untied LM head.
#pragma once

#include <vector>

#include "engine/sched/scheduler_config.h"
#include "models/model_spec.h"

namespace servesim::testing {

inline ModelSpec tiny_model_spec(int num_layers = 2) {
  ModelSpec m;
  m.name = "tiny-test";
  m.family = "llama";
  m.hidden_size = 32;
  m.num_layers = num_layers;
  m.num_heads = 4;
  m.num_kv_heads = 2;
  m.head_dim = 8;
  m.intermediate_size = 48;
  m.vocab_size = 64;
  m.max_position_embeddings = 256;
  return m;
}

inline SchedulerConfig tiny_scheduler_config() {
  SchedulerConfig c;
  c.max_num_seqs = 8;
  c.max_num_batched_tokens = 256;
  c.max_model_len = 256;
  c.block_size = 4;
  c.num_gpu_blocks = 200;
  return c;
}

inline std::vector<int32_t> test_prompt(int n, int salt = 0) {
  std::vector<int32_t> p;
  for (int i = 0; i < n; ++i) p.push_back((i * 7 + salt * 13 + 3) % 64);
  return p;
}

}  // namespace servesim::testing
