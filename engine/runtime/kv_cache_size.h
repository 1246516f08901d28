// size_kv_cache_blocks(): how many KV blocks a real-time engine gets when the user sizes its
// cache on this machine (`engine run`, `engine serve`) rather than by a GPU's MemoryPlan: a
// block count as given, a MiB budget, or by default room for max_num_seqs sequences of
// max_model_len tokens within kDefaultKvCacheMib. Stateless; thread-safe.
#pragma once

#include <cstdint>

#include "engine/sched/scheduler_config.h"
#include "models/dtype.h"
#include "models/model_spec.h"

namespace servesim {

// Default KV-cache budget (MiB of keys and values) when neither size is given.
inline constexpr int64_t kDefaultKvCacheMib = 1024;

// Blocks, block 0 (reserved) included, for `sc`'s block size, max_num_seqs and max_model_len
// and keys and values of `kv_dtype`. num_blocks and kv_cache_mib are the user's flags, 0 when
// not given. Throws ConfigError naming --num-blocks / --kv-cache-mib for both given, a
// negative one, or a cache under 2 blocks.
int64_t size_kv_cache_blocks(const SchedulerConfig& sc, const ModelSpec& model, DType kv_dtype,
                             int64_t num_blocks, int64_t kv_cache_mib);

}  // namespace servesim
