// ClientMachineSpec: the load generator's own CPU ("service.client.machine") — the machine the
// benchmark client runs on, as a station shared by every simulated client: `threads` event
// loops or worker processes (vLLM's `vllm bench serve`: one asyncio loop; aiperf: its worker
// processes; Locust: its processes), each serving the requests pinned to it one job at a time.
// Every request costs a send job (build and serialise the body: send_s + per_prompt_token_s ×
// prompt tokens), every streamed chunk a chunk job (SSE split, JSON decode, timestamp: chunk_s),
// and every answer a finish job (the output record: finish_s); each job's time is its mean ×
// a lognormal factor of mean 1 and coefficient of variation `cv`.
//
//   "client": {"machine": {"threads": 1}}          vllm bench serve's one loop, measured costs
//   "client": {"machine": {"threads": 8, "chunk_s": 4e-5}}
//
// The defaults are what scripts/measure_client_costs.py measured for a CPython asyncio client
// shaped as vLLM's benchmark (docs/service-layer.md, "The client machine", has the command and
// its output). Absent block: the ideal client of before (no jobs, no events). Parsing is
// strict and throws ConfigError naming the key and the fix. Immutable; safe to share.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "sim/workload/distribution.h"

namespace servesim {

// Measured by scripts/measure_client_costs.py (CPython 3.11, asyncio streams over loopback).
inline constexpr double kClientSendS = 5e-6;             // seconds per request, fixed part
inline constexpr double kClientPerPromptTokenS = 15e-9;  // seconds per prompt token (json.dumps)
inline constexpr double kClientChunkS = 10e-6;           // seconds per received SSE chunk
inline constexpr double kClientFinishS = 1e-6;           // seconds per answer
inline constexpr double kClientCv = 0.1;                 // one chunk's parse, robust spread

struct ClientMachineSpec {
  static constexpr int kMaxThreads = 4096;

  int threads = 1;  // event loops / worker processes, each one job at a time. In [1, kMaxThreads]
  Distribution send_s = Distribution::fixed(kClientSendS);      // seconds per request sent
  double per_prompt_token_s = kClientPerPromptTokenS;           // seconds per prompt token sent
  Distribution chunk_s = Distribution::fixed(kClientChunkS);    // seconds per chunk received
  Distribution finish_s = Distribution::fixed(kClientFinishS);  // seconds per answer
  double cv = kClientCv;  // coefficient of variation of each job's time (lognormal factor)

  // `context` prefixes messages ("scenario.json: service.client.machine"). Throws ConfigError.
  static ClientMachineSpec from_json(const nlohmann::json& j, const std::string& context,
                                     const std::string& base_dir);
};

}  // namespace servesim
