// request_prompt_into(): the synthetic prompt token ids of a RequestSpec, shared by the
// simulator's Replica and the engine's real-time server so both feed the scheduler the very
// same ids and hit the prefix cache the same way. Prompts derive from (shared-prefix group,
// session stream, position); Mooncake traces' block hash ids map each 512-token block to its
// own stream, so requests naming the same hash share those tokens; an agent call's context
// segments (RequestSpec::context) sit between the shared prefix and its new tokens. See
// sim/workload/synthetic_prompt.h for the token functions. Stateless; thread-safe.
#pragma once

#include <cstdint>
#include <vector>

#include "sim/workload/request_source.h"

namespace servesim {

// Writes spec.prompt_tokens ids in [0, vocab_size) into `tokens` (replacing its contents,
// reusing its capacity). REQUIRES: vocab_size >= 1, shared_prefix_tokens + the context
// segments' tokens <= prompt_tokens.
void request_prompt_into(const RequestSpec& spec, int32_t vocab_size, std::vector<int32_t>& tokens);

}  // namespace servesim
