// vLLM's OpenAI-compatible API server as the service layer's default frontend: what a scenario
// without a "service" block is served through, as `vllm serve` serves every real deployment
// ("service": "none" keeps the engine alone, as an in-process AsyncLLM benchmark measures it).
//
// Mirrors vLLM 0.12 (V1): one API-server process (`--api-server-count` 1 with one engine)
// beside a separate engine-core process, so the API server's work overlaps the GPU steps and
// costs latency, not step time, until it saturates. Per request it parses the HTTP body,
// validates it, renders the chat template and tokenises the prompt; per engine step it
// receives the step's outputs and, per streamed token, detokenises and serialises one SSE
// chunk. The values and where each comes from are in docs/service-layer.md ("The default
// frontend"). Stateless functions; thread-safe.
#pragma once

#include "sim/service/service_spec.h"

namespace servesim {

// Seconds per request for HTTP parsing, validation and the chat template (Python, one core).
inline constexpr double kVllmIntakeS = 1.5e-3;
// Seconds per prompt token for the Rust fast tokenizer on one core (~1M tokens/s).
inline constexpr double kVllmTokeniseS = 1e-6;
// Seconds per engine step to receive and decode the step's outputs from the engine core.
inline constexpr double kVllmStepS = 0.2e-3;
// Seconds per streamed token: incremental detokenisation, the chunk's JSON and its SSE write.
inline constexpr double kVllmPerTokenS = 40e-6;
// Coefficient of variation of each job's CPU time.
inline constexpr double kVllmCv = 0.3;

// The API server alone: one process, the costs above.
FrontendSpec vllm_frontend();
// The default service path: no network delay, no gateway, no stages, vllm_frontend().
ServiceSpec vllm_service();

}  // namespace servesim
