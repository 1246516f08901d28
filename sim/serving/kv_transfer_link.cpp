#include "sim/serving/kv_transfer_link.h"

#include <algorithm>

namespace servesim {

double KvTransferLink::start(double now_s, double transfer_s, const KvTransferSpec& spec,
                             double prefill_start_s, int num_layers) {
  const double begin_s = std::max(now_s, free_at_s_);
  double needed_s = transfer_s;
  if (spec.overlap == KvTransferOverlap::kLayerwise) {
    const double last_layer_s = (transfer_s - spec.latency_s) / std::max(num_layers, 1);
    const double unfinished_s = prefill_start_s + transfer_s - begin_s;
    needed_s = std::max(spec.latency_s + last_layer_s, unfinished_s);
  }
  free_at_s_ = begin_s + needed_s;
  busy_s_ += needed_s;
  ++transfers_;
  return free_at_s_;
}

}  // namespace servesim
