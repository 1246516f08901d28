#include "models/comm_model.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "models/config_error.h"
#include "models/hardware_spec.h"

namespace servesim {
namespace {

void require_fraction(double v, const char* name) {
  if (!(v > 0 && v <= 1)) {
    throw ConfigError(std::string("communication option ") + name + " must be in (0, 1], got " +
                      std::to_string(v));
  }
}

void require_non_negative(double v, const char* name) {
  if (!(v >= 0) || !std::isfinite(v)) {
    throw ConfigError(std::string("communication option ") + name +
                      " must be a finite number >= 0, got " + std::to_string(v));
  }
}

}  // namespace

CommModel::CommModel(double link_Bps, CommOptions options, bool nvlink)
    : link_Bps_(link_Bps), options_(options), nvlink_(nvlink) {
  if (!(link_Bps > 0) || !std::isfinite(link_Bps)) {
    throw ConfigError(
        "interconnect bandwidth must be > 0 bytes/s; set nvlink_gbs or pcie_gbs of the GPU");
  }
  require_fraction(options.all_reduce_efficiency, "all_reduce_efficiency");
  require_fraction(options.send_recv_efficiency, "send_recv_efficiency");
  require_fraction(options.custom_all_reduce_efficiency, "custom_all_reduce_efficiency");
  require_non_negative(options.custom_all_reduce_latency_s, "custom_all_reduce_latency_s");
  require_non_negative(options.all_reduce_latency_s, "all_reduce_latency_s");
  require_non_negative(options.send_recv_latency_s, "send_recv_latency_s");
  require_non_negative(options.all_to_all_latency_s, "all_to_all_latency_s");
  if (options.gpus_per_node < 1) {
    throw ConfigError("communication option gpus_per_node must be >= 1, got " +
                      std::to_string(options.gpus_per_node));
  }
  if (!(options.inter_node_Bps > 0) || !std::isfinite(options.inter_node_Bps)) {
    throw ConfigError("communication option inter_node_Bps must be > 0 bytes/s, got " +
                      std::to_string(options.inter_node_Bps));
  }
}

CommModel CommModel::for_hardware(const HardwareSpec& gpu, CommOptions options) {
  return CommModel(gpu.interconnect_Bps(), options, gpu.nvlink_Bps > 0);
}

double CommModel::all_reduce_s(int64_t bytes, int num_gpus) const {
  if (num_gpus <= 1 || bytes <= 0) return 0;
  const double traffic = 2.0 * (num_gpus - 1) / num_gpus * static_cast<double>(bytes);
  if (options_.custom_all_reduce && nvlink_ && num_gpus <= kCustomAllReduceMaxGpus &&
      bytes <= kCustomAllReduceMaxBytes) {
    return options_.custom_all_reduce_latency_s +
           traffic / (link_Bps_ * options_.custom_all_reduce_efficiency);
  }
  return options_.all_reduce_latency_s + traffic / (link_Bps_ * options_.all_reduce_efficiency);
}

double CommModel::all_gather_s(int64_t bytes, int num_gpus) const {
  if (num_gpus <= 1 || bytes <= 0) return 0;
  const double n = num_gpus;
  return options_.all_reduce_latency_s +
         (n - 1) / n * static_cast<double>(bytes) / (link_Bps_ * options_.all_reduce_efficiency);
}

double CommModel::send_recv_s(int64_t bytes) const {
  if (bytes <= 0) return 0;
  return options_.send_recv_latency_s +
         static_cast<double>(bytes) / (link_Bps_ * options_.send_recv_efficiency);
}

double CommModel::all_to_all_s(int64_t bytes, int num_ranks) const {
  if (num_ranks <= 1 || bytes <= 0) return 0;
  const double n = num_ranks;
  const double in_node = std::min(num_ranks, options_.gpus_per_node);
  const double b = static_cast<double>(bytes);
  const double nvlink_s = b * (in_node - 1) / n / (link_Bps_ * options_.send_recv_efficiency);
  const double network_s =
      b * (n - in_node) / n / (options_.inter_node_Bps * options_.send_recv_efficiency);
  return options_.all_to_all_latency_s + std::max(nvlink_s, network_s);
}

}  // namespace servesim
