// HardwareSpec: one GPU model as the memory planner and the roofline cost model see it —
// memory, bandwidth, peak compute per dtype, interconnect, the efficiencies kernels reach
// in practice, and a price.
//
// Plain value loaded from configs/hardware/*.json or a user's own JSON file (schema in
// docs/config-reference.md); validated on load; immutable afterwards. Thread-safe reads.
//
// Invariants after validate(): memory, bandwidth and bf16 peak > 0; efficiencies in (0, 1].
#pragma once

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "models/dtype.h"

namespace servesim {

struct HardwareSpec {
  std::string name;                  // catalog name, e.g. "A100-80GB-SXM"
  std::vector<std::string> aliases;  // other names users type ("A100-80GB", "a100")
  double memory_gb = 0;              // nominal, decimal GB, as the datasheet says
  // Total device memory as the CUDA driver reports it (torch.cuda.mem_get_info total),
  // which is what vLLM multiplies by gpu_memory_utilization. Bytes.
  int64_t memory_total_bytes = 0;
  std::string memory_total_source;   // where memory_total_bytes comes from
  double memory_bandwidth_Bps = 0;   // bytes/s, datasheet HBM/GDDR peak
  double peak_bf16_flops = 0;        // dense FLOP/s (no 2:4 sparsity); fp16 is the same
  double peak_fp8_flops = 0;         // 0: no fp8 tensor cores (weights are upcast)
  double peak_int8_flops = 0;        // 0: none
  double peak_fp32_flops = 0;        // non-tensor-core
  double nvlink_Bps = 0;             // bytes/s per GPU, bidirectional total; 0: none
  double pcie_Bps = 0;               // bytes/s per direction
  double compute_efficiency = 0.75;  // fraction of peak large GEMMs reach
  double memory_efficiency = 0.8;    // fraction of bandwidth streaming kernels reach
  double kernel_launch_s = 5e-6;     // seconds per kernel launch (no CUDA graphs)
  double price_per_hour_usd = 0;     // one GPU, on demand
  std::string price_source;

  static HardwareSpec from_json(const nlohmann::json& j, const std::string& origin);
  nlohmann::json to_json() const;
  void validate() const;

  // Peak dense FLOP/s for GEMMs whose weights are stored in `dtype` (int4 and fp8 without
  // fp8 tensor cores compute in bf16 after dequantisation).
  double peak_flops(DType dtype) const;
  // Link bandwidth (bytes/s, one direction) tensor-parallel all-reduces use: NVLink when
  // present, else PCIe.
  double interconnect_Bps() const;
  double memory_total_gib() const { return static_cast<double>(memory_total_bytes) / (1 << 30); }
};

}  // namespace servesim
