// HostKvLink: one GPU's PCIe link to host memory as KV offload uses it (vLLM 0.11-0.14's
// OffloadingConnector, native CPU backend): loads (host to GPU) and stores (GPU to host) each
// go one after another in their own direction, as one DMA stream per direction copies them;
// PCIe is full duplex, so a store never delays a load. Every GPU of a replica moves its own
// shard over its own link at once, so one link stands for all of them.
//
// A transfer costs latency_s (submitting the copy and seeing it complete, an estimate:
// docs/kv-offload.md) plus its bytes over bandwidth_Bps. Plain value; not thread-safe.
#pragma once

#include <cstdint>

namespace servesim {

class HostKvLink {
 public:
  // REQUIRES: bandwidth_Bps > 0, latency_s >= 0.
  HostKvLink(double bandwidth_Bps, double latency_s);

  // A load of `bytes` per GPU asked for at now_s; returns when it completes.
  double load(double now_s, double bytes);
  // A store of `bytes` per GPU asked for at now_s; returns when it completes.
  double store(double now_s, double bytes);

  double bandwidth_Bps() const { return bandwidth_Bps_; }
  double load_busy_s() const { return loads_.busy_s; }  // seconds spent loading
  double store_busy_s() const { return stores_.busy_s; }
  double loaded_bytes() const { return loads_.bytes; }  // per GPU
  double stored_bytes() const { return stores_.bytes; }
  int64_t num_loads() const { return loads_.count; }

 private:
  struct Direction {
    double free_at_s = 0;
    double busy_s = 0;
    double bytes = 0;
    int64_t count = 0;
  };
  double start(Direction& d, double now_s, double bytes) const;

  double bandwidth_Bps_;
  double latency_s_;
  Direction loads_;
  Direction stores_;
};

}  // namespace servesim
