// CommModel: time of the collectives a model replica runs between its GPUs — the
// tensor-parallel all-reduce (ring), the pipeline-parallel point-to-point send and the
// expert-parallel all-to-all (MoE dispatch and combine).
//
//   all_reduce_s(B, n) = latency + 2 (n - 1) / n * B / (link * efficiency)      (n > 1)
//     NCCL's ring; on NVLink, up to 8 GPUs and B <= 8 MiB, vLLM's own custom all-reduce
//     instead: custom latency + 2 (n - 1) / n * B / (link * custom efficiency).
//   all_gather_s(B, n) = latency + (n - 1) / n * B / (link * efficiency)       (n > 1)
//   send_recv_s(B)     = p2p latency + B / (link * p2p efficiency)
//   all_to_all_s(B, n) = a2a latency + max(B * (g - 1) / n / (link * p2p efficiency),
//                                          B * (n - g) / n / (inter-node link * p2p efficiency))
//     B: what one rank exchanges; g = min(n, gpus_per_node): the n ranks fill nodes of
//     gpus_per_node GPUs, a 1/n slice of B stays on the GPU, the peers in its node are
//     reached over NVLink and the rest over the inter-node link, both at once.
//
// link is one direction of the GPU's interconnect (HardwareSpec::interconnect_Bps()).
// The latency is a fixed cost per collective, not per ring hop: NCCL's measured small-message
// all-reduce time does not grow with the number of GPUs (see docs/cost-model.md).
//
// Immutable value; thread-safe. Invariants: link > 0, efficiencies in (0, 1], latencies >= 0.
#pragma once

#include <cstdint>

namespace servesim {

struct HardwareSpec;

// Defaults fitted to NCCL timings on 2/4/8-GPU A100 and H100 DGX nodes
// (reference/measured/vidur-profiling/network/{a100,h100}_dgx; docs/cost-model.md has the fit).
// Median all-reduce time of messages <= 64 KiB over the six node/GPU-count groups.
inline constexpr double kAllReduceLatencyS = 32e-6;
// Bus bandwidth of messages >= 8 MB as a fraction of one-way NVLink bandwidth, mean of the six
// groups (A100 0.57-0.66, H100 0.64-0.84).
inline constexpr double kAllReduceBandwidthEfficiency = 0.68;
// vLLM's custom all-reduce (vllm/distributed/device_communicators/custom_all_reduce.py), which
// vLLM runs instead of NCCL for buffers up to its 8 MiB default max_size on up to 8
// NVLink-connected GPUs: every decode step's all-reduces. Fitted (mean |log(model / measured)|)
// on the CUDA-graph timings of vLLM 0.14 / 0.19 that ai-dynamo/aiconfigurator's collector took
// on A100-SXM, H100-SXM, H200 and B200, 2/4/8 GPUs, 128 B - 8 MiB (204 runs,
// configs/validation/kernels/vllm-custom-allreduce.csv): 5 us plus the ring's traffic at 0.23
// of one-way NVLink; mean |log error| 0.13-0.18 on A100/H100/H200 and 0.45 on B200, where the
// NCCL constants above miss these runs by 1.0-1.4 (about 3-4x).
inline constexpr double kCustomAllReduceLatencyS = 5e-6;
inline constexpr double kCustomAllReduceEfficiency = 0.23;
inline constexpr int64_t kCustomAllReduceMaxBytes = int64_t{8} << 20;
inline constexpr int kCustomAllReduceMaxGpus = 8;
// Point-to-point send/recv between two GPUs of one node: median small-message time (A100 14 us,
// H100 7 us) and large-message bandwidth over one-way NVLink (A100 0.74, H100 0.80).
inline constexpr double kSendRecvLatencyS = 10e-6;
inline constexpr double kSendRecvBandwidthEfficiency = 0.77;

// Expert-parallel all-to-all: NCCL's and DeepEP's dispatch and combine are batches of
// point-to-point sends, so they take the send/recv bandwidth efficiency; the fixed cost is the
// all-reduce latency (one collective launch and its synchronisation). Not fitted: no
// all-to-all timings are at hand (docs/expert-parallelism.md).
inline constexpr double kAllToAllLatencyS = kAllReduceLatencyS;
// A DGX/HGX node: 8 GPUs on NVLink; beyond it one 400 Gb/s InfiniBand NIC per GPU
// (ConnectX-7), 50 GB/s each way.
inline constexpr int kGpusPerNode = 8;
inline constexpr double kInterNodeBps = 50e9;

struct CommOptions {
  double all_reduce_latency_s = kAllReduceLatencyS;              // seconds per all-reduce
  double all_reduce_efficiency = kAllReduceBandwidthEfficiency;  // fraction of link bandwidth
  // false: every all-reduce on NCCL (vLLM's --disable-custom-all-reduce).
  bool custom_all_reduce = true;
  double custom_all_reduce_latency_s = kCustomAllReduceLatencyS;     // seconds per all-reduce
  double custom_all_reduce_efficiency = kCustomAllReduceEfficiency;  // fraction of link
  double send_recv_latency_s = kSendRecvLatencyS;                    // seconds per send
  double send_recv_efficiency = kSendRecvBandwidthEfficiency;        // fraction of link bandwidth
  double all_to_all_latency_s = kAllToAllLatencyS;                   // seconds per all-to-all
  int gpus_per_node = kGpusPerNode;                                  // GPUs sharing NVLink
  double inter_node_Bps = kInterNodeBps;  // bytes/s per GPU, one direction, between nodes
};

class CommModel {
 public:
  // link_Bps: bytes/s one direction between two GPUs; nvlink: whether that link is NVLink
  // (vLLM's custom all-reduce needs it). Throws ConfigError naming the option when
  // link_Bps <= 0, an efficiency is outside (0, 1] or a latency is negative.
  explicit CommModel(double link_Bps, CommOptions options = {}, bool nvlink = false);
  static CommModel for_hardware(const HardwareSpec& gpu, CommOptions options = {});

  // Seconds for an all-reduce of `bytes` (the per-GPU buffer) over num_gpus GPUs, on vLLM's
  // custom all-reduce where vLLM would use it, else NCCL's ring; 0 when num_gpus <= 1 or
  // bytes <= 0.
  double all_reduce_s(int64_t bytes, int num_gpus) const;
  // Seconds for a ring all-gather assembling `bytes` in total on each of num_gpus GPUs (half the
  // traffic of an all-reduce of the same buffer); 0 when num_gpus <= 1 or bytes <= 0.
  double all_gather_s(int64_t bytes, int num_gpus) const;
  // Seconds to send `bytes` from one GPU to another; 0 when bytes <= 0.
  double send_recv_s(int64_t bytes) const;
  // Seconds for an all-to-all over num_ranks GPUs in which each rank exchanges `bytes` (its
  // slice for itself included, which stays put); 0 when num_ranks <= 1 or bytes <= 0.
  double all_to_all_s(int64_t bytes, int num_ranks) const;

  double link_Bps() const { return link_Bps_; }
  const CommOptions& options() const { return options_; }

 private:
  double link_Bps_;  // bytes/s, one direction
  CommOptions options_;
  bool nvlink_ = false;
};

}  // namespace servesim
