#include "engine/runtime/kv_cache_size.h"

#include <algorithm>
#include <string>

#include "models/config_error.h"

namespace servesim {

int64_t size_kv_cache_blocks(const SchedulerConfig& sc, const ModelSpec& model, DType kv_dtype,
                             int64_t num_blocks, int64_t kv_cache_mib) {
  constexpr int64_t kBytesPerMib = int64_t{1} << 20;
  if (num_blocks != 0 && kv_cache_mib != 0) {
    throw ConfigError("give the KV cache as --num-blocks or --kv-cache-mib, not both");
  }
  if (num_blocks < 0) throw ConfigError("--num-blocks must be >= 2");
  if (kv_cache_mib < 0) throw ConfigError("--kv-cache-mib must be > 0");
  const int64_t block_bytes =
      static_cast<int64_t>(model.kv_bytes_per_token(kv_dtype, 1)) * sc.block_size;
  int64_t blocks = num_blocks;
  if (kv_cache_mib > 0) {
    blocks = kv_cache_mib * kBytesPerMib / block_bytes + 1;
  } else if (blocks == 0) {
    const int64_t per_sequence = (sc.max_model_len + sc.block_size - 1) / sc.block_size;
    const int64_t cap = kDefaultKvCacheMib * kBytesPerMib / block_bytes;
    blocks = std::min<int64_t>(sc.max_num_seqs * per_sequence, cap) + 1;
  }
  if (blocks < 2) {
    throw ConfigError("KV cache of " + std::to_string(blocks) +
                      " blocks is too small: it needs at least 2 (block 0 is reserved); "
                      "raise --num-blocks or --kv-cache-mib");
  }
  return blocks;
}

}  // namespace servesim
