#include "models/hardware_spec.h"

#include <cmath>
#include <nlohmann/json.hpp>

#include "models/config_error.h"
#include "models/json_object_reader.h"

namespace servesim {
namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
constexpr double kTera = 1e12;
constexpr double kGiga = 1e9;

double non_negative(JsonObjectReader& r, const std::string& key, double fallback) {
  const double v = r.optional<double>(key, fallback);
  if (!(v >= 0) || !std::isfinite(v)) r.fail(key, "must be a finite number >= 0");
  return v;
}

double fraction(JsonObjectReader& r, const std::string& key, double fallback) {
  const double v = r.optional<double>(key, fallback);
  if (!(v > 0 && v <= 1)) r.fail(key, "must be in (0, 1], got " + std::to_string(v));
  return v;
}

}  // namespace

HardwareSpec HardwareSpec::from_json(const nlohmann::json& j, const std::string& origin) {
  JsonObjectReader r(j, origin);
  HardwareSpec h;
  h.name = r.required<std::string>("name");
  h.aliases = r.optional<std::vector<std::string>>("aliases", {});
  h.memory_gb = r.required<double>("memory_gb");
  if (!(h.memory_gb > 0)) r.fail("memory_gb", "must be > 0");
  // Without a measured figure, assume the driver exposes the nominal size minus the
  // ~0.9 GiB that 80 GB parts are seen to reserve.
  const double total_gib = r.optional<double>("memory_total_gib", h.memory_gb * 1e9 / kGiB);
  if (!(total_gib > 0)) r.fail("memory_total_gib", "must be > 0");
  h.memory_total_bytes = static_cast<int64_t>(std::llround(total_gib * kGiB));
  // Exact bytes, as torch.cuda.mem_get_info() reports them on the card at hand.
  if (r.has("memory_total_bytes")) {
    if (r.has("memory_total_gib")) {
      r.fail("memory_total_bytes", "give it or memory_total_gib, not both");
    }
    const double bytes = r.required<double>("memory_total_bytes");
    if (!(bytes >= 1 && bytes < 1e15)) r.fail("memory_total_bytes", "must be a byte count > 0");
    h.memory_total_bytes = static_cast<int64_t>(bytes);
  } else {
    r.raw("memory_total_bytes");
  }
  h.memory_total_source = r.optional<std::string>("memory_total_source", "nominal size");
  h.memory_bandwidth_Bps = r.required<double>("memory_bandwidth_tbs") * kTera;
  JsonObjectReader peaks(r.raw("peak_tflops"), origin + ": peak_tflops");
  h.peak_bf16_flops = peaks.required<double>("bf16") * kTera;
  h.peak_fp8_flops = non_negative(peaks, "fp8", 0) * kTera;
  h.peak_int8_flops = non_negative(peaks, "int8", 0) * kTera;
  h.peak_fp32_flops = non_negative(peaks, "fp32", 0) * kTera;
  peaks.finish();
  h.nvlink_Bps = non_negative(r, "nvlink_gbs", 0) * kGiga;
  h.pcie_Bps = non_negative(r, "pcie_gbs", 32) * kGiga;
  if (r.has("efficiency")) {
    JsonObjectReader eff(r.raw("efficiency"), origin + ": efficiency");
    h.compute_efficiency = fraction(eff, "compute", h.compute_efficiency);
    h.memory_efficiency = fraction(eff, "memory", h.memory_efficiency);
    eff.optional<std::string>("source", "");
    eff.finish();
  } else {
    r.raw("efficiency");
  }
  h.kernel_launch_s = non_negative(r, "kernel_launch_us", h.kernel_launch_s * 1e6) * 1e-6;
  h.price_per_hour_usd = non_negative(r, "price_per_hour_usd", 0);
  h.price_source = r.optional<std::string>("price_source", "");
  r.optional<std::string>("notes", "");
  r.finish();
  h.validate();
  return h;
}

nlohmann::json HardwareSpec::to_json() const {
  return {{"name", name},
          {"aliases", aliases},
          {"memory_gb", memory_gb},
          {"memory_total_gib", memory_total_gib()},
          {"memory_total_source", memory_total_source},
          {"memory_bandwidth_tbs", memory_bandwidth_Bps / kTera},
          {"peak_tflops",
           {{"bf16", peak_bf16_flops / kTera},
            {"fp8", peak_fp8_flops / kTera},
            {"int8", peak_int8_flops / kTera},
            {"fp32", peak_fp32_flops / kTera}}},
          {"nvlink_gbs", nvlink_Bps / kGiga},
          {"pcie_gbs", pcie_Bps / kGiga},
          {"efficiency", {{"compute", compute_efficiency}, {"memory", memory_efficiency}}},
          {"kernel_launch_us", kernel_launch_s * 1e6},
          {"price_per_hour_usd", price_per_hour_usd},
          {"price_source", price_source}};
}

void HardwareSpec::validate() const {
  const std::string at = "gpu '" + name + "'";
  if (!(memory_total_bytes > 0)) throw ConfigError(at + ": memory_total_gib must be > 0");
  if (!(memory_bandwidth_Bps > 0)) throw ConfigError(at + ": memory_bandwidth_tbs must be > 0");
  if (!(peak_bf16_flops > 0)) throw ConfigError(at + ": peak_tflops.bf16 must be > 0");
  if (!(compute_efficiency > 0 && compute_efficiency <= 1) ||
      !(memory_efficiency > 0 && memory_efficiency <= 1)) {
    throw ConfigError(at + ": efficiency.compute and efficiency.memory must be in (0, 1]");
  }
}

double HardwareSpec::peak_flops(DType dtype) const {
  switch (dtype) {
    case DType::kFp32:
      return peak_fp32_flops > 0 ? peak_fp32_flops : peak_bf16_flops / 16;
    case DType::kFp8:
      return peak_fp8_flops > 0 ? peak_fp8_flops : peak_bf16_flops;
    case DType::kInt8:
      return peak_int8_flops > 0 ? peak_int8_flops : peak_bf16_flops;
    default:
      return peak_bf16_flops;
  }
}

double HardwareSpec::interconnect_Bps() const {
  // NVLink figures are bidirectional totals; a ring all-reduce sends one way per link.
  return nvlink_Bps > 0 ? nvlink_Bps / 2 : pcie_Bps;
}

}  // namespace servesim
