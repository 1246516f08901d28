// Synthetic token ids for the simulator: deterministic functions of (stream, position), so
// prompts that share a system prompt, or a multi-turn session's growing context, share
// exactly the token ids they would share in reality and hit the prefix cache the same way.
//
//  - Shared prefix groups: token i of group g is synthetic_token(g, i, vocab).
//  - Per-request / per-session streams: token at absolute position p of stream s is
//    synthetic_stream_token(s, p, vocab). Groups and streams are separate domains, so a group
//    id equal to a stream id shares nothing.
//
// A prompt is the group's first shared_len tokens followed by the stream's tokens at positions
// shared_len, shared_len + 1, ...: synthetic_prompt(g, S, s, U, vocab).
//
// Multi-turn sessions: let the simulator sample outputs with synthetic_stream_token(s, p) at
// the position p each output takes. Then turn k+1's prompt, "previous prompt + previous
// output + new user tokens", is synthetic_prompt(g, S, s, U_k + O_k + U_new, vocab): one call,
// identical token ids, a prefix-cache hit on all full blocks of the previous turn.
// (Sampled tokens may then equal a stop token id; use ignore_eos or stop ids >= vocab_size
// when exact output lengths matter.) Stateless; thread-safe.
#pragma once

#include <cstdint>
#include <vector>

namespace servesim {

// Token `position` of shared-prefix group `group`, in [0, vocab_size). REQUIRES: vocab >= 1.
int32_t synthetic_token(uint64_t group, uint64_t position, int32_t vocab_size);

// Token at absolute `position` of a request's or session's own stream, in [0, vocab_size).
int32_t synthetic_stream_token(uint64_t stream, uint64_t position, int32_t vocab_size);

// shared_len tokens of `shared_group`, then unique_len tokens of `unique_stream` at positions
// shared_len .. shared_len + unique_len - 1. REQUIRES: lengths >= 0, vocab >= 1.
std::vector<int32_t> synthetic_prompt(uint64_t shared_group, int shared_len, uint64_t unique_stream,
                                      int unique_len, int32_t vocab);

// The same, written into `out` (replacing its contents, reusing its capacity).
void synthetic_prompt_into(std::vector<int32_t>& out, uint64_t shared_group, int shared_len,
                           uint64_t unique_stream, int unique_len, int32_t vocab);

// Appends `count` stream tokens at positions out.size(), out.size() + 1, ...
void append_stream_tokens(std::vector<int32_t>& out, uint64_t stream, int count, int32_t vocab);

// Appends `count` stream tokens at positions first_position, first_position + 1, ...
void append_stream_run(std::vector<int32_t>& out, uint64_t stream, uint64_t first_position,
                       int count, int32_t vocab);

}  // namespace servesim
