// completion_request_body(): the JSON body the load generator POSTs for one RequestSpec, so
// the server does the work the simulation models: the request's prompt ids (sent as a token
// list, which vLLM's /v1/completions accepts as `prompt`), exactly output_tokens tokens
// (`max_tokens` = `min_tokens`, `ignore_eos`: vLLM's sampling extensions), streamed with the
// usage block (`stream_options.include_usage`).
//
// /v1/chat/completions takes text, not ids: the message is one short common English word
// per prompt id, so its length is close to prompt_tokens on most tokenizers; the server's
// usage block then gives the true count. Stateless; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "serve/loadtest/stream_chunk.h"
#include "sim/workload/request_source.h"

namespace servesim {

std::string completion_request_body(const RequestSpec& spec, const std::vector<int32_t>& prompt,
                                    const std::string& model, ApiKind api);

}  // namespace servesim
