#include "sim/workload/request_prompt.h"

#include "sim/workload/synthetic_prompt.h"

namespace servesim {
namespace {

// Mooncake block hash ids live in their own domain so they never collide with shared-prefix
// groups, which are small integers.
constexpr uint64_t kMooncakeDomain = 0x4d6f6f6e63616b65ULL;
constexpr int kMooncakeBlockTokens = 512;

}  // namespace

void request_prompt_into(const RequestSpec& spec, int32_t vocab_size,
                         std::vector<int32_t>& tokens) {
  if (!spec.block_hashes.empty()) {
    tokens.clear();
    tokens.reserve(static_cast<size_t>(spec.prompt_tokens));
    for (uint64_t hash : spec.block_hashes) {
      for (int k = 0;
           k < kMooncakeBlockTokens && static_cast<int>(tokens.size()) < spec.prompt_tokens; ++k) {
        tokens.push_back(
            synthetic_token(hash ^ kMooncakeDomain, static_cast<uint64_t>(k), vocab_size));
      }
    }
    const int rest = spec.prompt_tokens - static_cast<int>(tokens.size());
    if (rest > 0) append_stream_tokens(tokens, spec.session, rest, vocab_size);
    return;
  }
  if (!spec.context.empty()) {
    synthetic_prompt_into(tokens, spec.prefix_group, spec.shared_prefix_tokens, spec.session, 0,
                          vocab_size);
    for (const PromptSegment& segment : spec.context) {
      append_stream_run(tokens, segment.stream, segment.offset, segment.tokens, vocab_size);
    }
    const int rest = spec.prompt_tokens - static_cast<int>(tokens.size());
    if (rest > 0) append_stream_tokens(tokens, spec.session, rest, vocab_size);
    return;
  }
  synthetic_prompt_into(tokens, spec.prefix_group, spec.shared_prefix_tokens, spec.session,
                        spec.prompt_tokens - spec.shared_prefix_tokens, vocab_size);
}

}  // namespace servesim
