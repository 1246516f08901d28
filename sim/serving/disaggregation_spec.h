// DisaggregationSpec: a prefill/decode-disaggregated deployment ("xPyD" in Dynamo's and vLLM's
// words): P prefill instances and D decode instances, each role its own GPU, TP/PP and engine
// flags, joined by a KV transfer over a link (vLLM's `--kv-transfer-config` with a KV
// connector such as NixlConnector). A request is prefilled on a prefill instance (vLLM's
// proxy sends it there with max_tokens 1), handed to a decode instance, which allocates the
// prompt's blocks, pulls the KV and then generates every output token the client sees.
//
// KvTransferSpec prices one transfer: the fixed latency plus the bytes each GPU moves over its
// own link; both sides move their shards in parallel, so the side with the most bytes per GPU
// sets the time. Plain values; from_json functions throw ConfigError naming the key.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>

#include "models/engine_config.h"
#include "models/hardware_spec.h"
#include "models/parallel_config.h"
#include "sim/serving/router.h"

namespace servesim {

// When the KV moves relative to the prefill.
enum class KvTransferOverlap {
  // After the prefill: the decode instance pulls the finished prompt's KV (vLLM's
  // NixlConnector, v0.9 onwards).
  kAfterPrefill,
  // Layer by layer while the prefill runs (LMCache / Mooncake-style push): only what the last
  // layer adds, or what the link could not keep up with, remains after the prefill.
  kLayerwise,
};

struct KvTransferSpec {
  std::string connector = "NixlConnector";  // vLLM's kv_connector name, for the output
  std::string link = "infiniband";          // preset the numbers below came from, or "custom"
  double bandwidth_Bps = 50e9;              // bytes/s per GPU, one direction
  double latency_s = 10e-6;                 // seconds per transfer, fixed
  // Seconds from the prefill's end to the decode instance's receiving the request: the
  // proxy's reading the prefill response and sending the decode request.
  double handoff_s = 1e-3;
  KvTransferOverlap overlap = KvTransferOverlap::kAfterPrefill;

  // Seconds to move the KV of `tokens` tokens when each prefill GPU holds
  // `prefill_bytes_per_token` bytes of it per token and each decode GPU
  // `decode_bytes_per_token`. REQUIRES: tokens >= 0.
  double transfer_s(int tokens, double prefill_bytes_per_token,
                    double decode_bytes_per_token) const;

  // "kv_transfer": {"connector", "link", "bandwidth_GBps", "latency_us", "handoff_ms",
  // "overlap"}; a link preset fills bandwidth and latency, which the keys then override.
  // The GPUs give the NVLink and PCIe figures of the "nvlink" and "pcie" presets (the slower
  // side's); "nvlink" between two GPU types is refused (one NVLink domain is one GPU type).
  static KvTransferSpec from_json(const nlohmann::json& j, const std::string& context,
                                  const HardwareSpec& prefill_gpu, const HardwareSpec& decode_gpu);
  // Both roles on `gpu`.
  static KvTransferSpec from_json(const nlohmann::json& j, const std::string& context,
                                  const HardwareSpec& gpu) {
    return from_json(j, context, gpu, gpu);
  }
};

// One role's deployment: `instances` engines, each with this GPU, parallelism and flags.
struct DisaggregatedRole {
  int instances = 1;
  HardwareSpec gpu;
  // One instance: dp data-parallel ranks of tp x pp GPUs each (with expert parallelism one
  // EP group of tp x dp ranks, stepping together); servers is 1.
  ParallelConfig parallel;
  EngineConfig engine;
};

struct DisaggregationSpec {
  bool enabled = false;
  DisaggregatedRole prefill;
  DisaggregatedRole decode;
  KvTransferSpec kv_transfer;
  RouterPolicy prefill_router = RouterPolicy::kLeastOutstanding;
  RouterPolicy decode_router = RouterPolicy::kLeastKv;

  int total_gpus() const {
    return prefill.instances * prefill.parallel.total_gpus() +
           decode.instances * decode.parallel.total_gpus();
  }
  // "2P (TP 2 on H100-SXM) + 1D (TP 4 on H100-SXM), NixlConnector over infiniband";
  // a role with data-parallel ranks "1P (TP 1, DP 8, EP 8 on H200)".
  std::string describe() const;
};

std::string_view kv_transfer_overlap_name(KvTransferOverlap overlap);

}  // namespace servesim
