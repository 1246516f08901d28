#include "sim/serving/disaggregation_spec.h"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "models/config_error.h"
#include "models/json_object_reader.h"

namespace servesim {
namespace {

struct LinkPreset {
  const char* name;
  double bandwidth_Bps;  // per GPU, one direction; 0: the GPU's own figure
  double latency_s;
};

// Per-GPU, one-direction figures. InfiniBand NDR: one 400 Gb/s ConnectX-7 per GPU, as DGX
// H100 and HGX H200 nodes have (50 GB/s); Ethernet: one 100 GbE port per GPU (12.5 GB/s).
// NVLink and PCIe take the GPU file's numbers (nvlink_Bps is the bidirectional total, halved
// here). Latencies: a one-sided RDMA read completes in a few microseconds on InfiniBand, about
// ten times that through a TCP/IP Ethernet stack; an NVLink or PCIe peer copy costs a launch.
constexpr LinkPreset kPresets[] = {
    {"infiniband", 50e9, 10e-6},
    {"ethernet", 12.5e9, 100e-6},
    {"nvlink", 0, 5e-6},
    {"pcie", 0, 10e-6},
};

double gpu_link_Bps(const std::string& link, const HardwareSpec& gpu) {
  return link == "nvlink" ? gpu.nvlink_Bps / 2 : gpu.pcie_Bps;
}

std::string preset_names() {
  std::string names;
  for (const LinkPreset& p : kPresets) names += std::string(names.empty() ? "" : ", ") + p.name;
  return names + " or custom";
}

double positive_number(JsonObjectReader& r, const std::string& key, double scale, double fallback) {
  if (!r.has(key)) {
    r.raw(key);
    return fallback;
  }
  const double v = r.required<double>(key);
  if (!(v > 0 && std::isfinite(v))) r.fail(key, "must be a number > 0");
  return v * scale;
}

double non_negative_number(JsonObjectReader& r, const std::string& key, double scale,
                           double fallback) {
  if (!r.has(key)) {
    r.raw(key);
    return fallback;
  }
  const double v = r.required<double>(key);
  if (!(v >= 0 && std::isfinite(v))) r.fail(key, "must be a number >= 0");
  return v * scale;
}

}  // namespace

double KvTransferSpec::transfer_s(int tokens, double prefill_bytes_per_token,
                                  double decode_bytes_per_token) const {
  const double per_gpu_bytes =
      static_cast<double>(tokens) * std::max(prefill_bytes_per_token, decode_bytes_per_token);
  return latency_s + per_gpu_bytes / bandwidth_Bps;
}

KvTransferSpec KvTransferSpec::from_json(const nlohmann::json& j, const std::string& context,
                                         const HardwareSpec& prefill_gpu,
                                         const HardwareSpec& decode_gpu) {
  JsonObjectReader r(j, context);
  KvTransferSpec s;
  s.connector = r.optional<std::string>("connector", s.connector);
  if (s.connector.empty()) r.fail("connector", "must name vLLM's KV connector, e.g. NixlConnector");
  s.link = r.optional<std::string>("link", s.link);
  const LinkPreset* preset = nullptr;
  for (const LinkPreset& p : kPresets) {
    if (s.link == p.name) preset = &p;
  }
  if (s.link == "nvlink" && prefill_gpu.name != decode_gpu.name) {
    r.fail("link", "\"nvlink\" joins GPUs of one NVLink domain, not prefill on " +
                       prefill_gpu.name + " and decode on " + decode_gpu.name +
                       ": use infiniband or ethernet");
  }
  if (preset != nullptr) {
    s.latency_s = preset->latency_s;
    s.bandwidth_Bps = preset->bandwidth_Bps;
    for (const HardwareSpec* gpu : {&prefill_gpu, &decode_gpu}) {
      if (preset->bandwidth_Bps > 0) break;
      const double own_Bps = gpu_link_Bps(s.link, *gpu);
      if (!(own_Bps > 0) && !r.has("bandwidth_GBps")) {
        r.fail("link", "\"" + s.link + "\": " + gpu->name +
                           " has no such link in its GPU file; give bandwidth_GBps");
      }
      // Each side moves its shards over its own link: the slower one sets the pace.
      s.bandwidth_Bps = s.bandwidth_Bps > 0 ? std::min(s.bandwidth_Bps, own_Bps) : own_Bps;
    }
  } else if (s.link != "custom") {
    r.fail("link", "must be " + preset_names() + " (got \"" + s.link + "\")");
  } else if (!r.has("bandwidth_GBps")) {
    r.fail("bandwidth_GBps", "is required with \"link\": \"custom\"");
  }
  s.bandwidth_Bps = positive_number(r, "bandwidth_GBps", 1e9, s.bandwidth_Bps);
  s.latency_s = non_negative_number(r, "latency_us", 1e-6, s.latency_s);
  s.handoff_s = non_negative_number(r, "handoff_ms", 1e-3, s.handoff_s);
  const std::string overlap = r.optional<std::string>("overlap", "after_prefill");
  if (overlap == "after_prefill") {
    s.overlap = KvTransferOverlap::kAfterPrefill;
  } else if (overlap == "layerwise") {
    s.overlap = KvTransferOverlap::kLayerwise;
  } else {
    r.fail("overlap", "must be \"after_prefill\" or \"layerwise\" (got \"" + overlap + "\")");
  }
  r.finish();
  return s;
}

std::string DisaggregationSpec::describe() const {
  auto role = [](const DisaggregatedRole& r, const char* letter) {
    std::string s = std::to_string(r.instances) + letter + " (TP " + std::to_string(r.parallel.tp);
    if (r.parallel.pp > 1) s += ", PP " + std::to_string(r.parallel.pp);
    if (r.parallel.dp > 1) s += ", DP " + std::to_string(r.parallel.dp);
    if (r.parallel.ep() > 1) s += ", EP " + std::to_string(r.parallel.ep());
    return s + " on " + r.gpu.name + ")";
  };
  return role(prefill, "P") + " + " + role(decode, "D") + ", " + kv_transfer.connector + " over " +
         kv_transfer.link;
}

std::string_view kv_transfer_overlap_name(KvTransferOverlap overlap) {
  return overlap == KvTransferOverlap::kLayerwise ? "layerwise" : "after_prefill";
}

}  // namespace servesim
