#include "sim/workload/synthetic_prompt.h"

#include <cstddef>

#include "engine/sched/block_hash.h"

namespace servesim {
namespace {

constexpr uint64_t kGroupDomain = 0x243f6a8885a308d3ULL;
constexpr uint64_t kStreamDomain = 0x13198a2e03707344ULL;

// A token is a hash of its stream's seed and its position; loops over a run of positions
// compute the seed once (agent prompts re-derive thousands of context tokens per call).
inline uint64_t seed_of(uint64_t domain, uint64_t id) {
  return mix64(id ^ domain);
}

inline int32_t token_at(uint64_t seed, uint64_t position, int32_t vocab) {
  const uint64_t h = mix64(seed + position * 0x9e3779b97f4a7c15ULL);
  return static_cast<int32_t>(h % static_cast<uint64_t>(vocab));
}

inline int32_t token_of(uint64_t domain, uint64_t id, uint64_t position, int32_t vocab) {
  return token_at(seed_of(domain, id), position, vocab);
}

}  // namespace

int32_t synthetic_token(uint64_t group, uint64_t position, int32_t vocab_size) {
  return token_of(kGroupDomain, group, position, vocab_size);
}

int32_t synthetic_stream_token(uint64_t stream, uint64_t position, int32_t vocab_size) {
  return token_of(kStreamDomain, stream, position, vocab_size);
}

void synthetic_prompt_into(std::vector<int32_t>& out, uint64_t shared_group, int shared_len,
                           uint64_t unique_stream, int unique_len, int32_t vocab) {
  out.clear();
  out.reserve(static_cast<size_t>(shared_len) + static_cast<size_t>(unique_len));
  const uint64_t seed = seed_of(kGroupDomain, shared_group);
  for (int i = 0; i < shared_len; ++i) out.push_back(token_at(seed, i, vocab));
  append_stream_tokens(out, unique_stream, unique_len, vocab);
}

std::vector<int32_t> synthetic_prompt(uint64_t shared_group, int shared_len, uint64_t unique_stream,
                                      int unique_len, int32_t vocab) {
  std::vector<int32_t> out;
  synthetic_prompt_into(out, shared_group, shared_len, unique_stream, unique_len, vocab);
  return out;
}

void append_stream_tokens(std::vector<int32_t>& out, uint64_t stream, int count, int32_t vocab) {
  append_stream_run(out, stream, out.size(), count, vocab);
}

void append_stream_run(std::vector<int32_t>& out, uint64_t stream, uint64_t first_position,
                       int count, int32_t vocab) {
  const uint64_t seed = seed_of(kStreamDomain, stream);
  for (int i = 0; i < count; ++i) {
    out.push_back(token_at(seed, first_position + static_cast<uint64_t>(i), vocab));
  }
}

}  // namespace servesim
