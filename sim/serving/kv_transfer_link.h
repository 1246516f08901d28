// KvTransferLink: the inbound KV link of one decode instance in a disaggregated deployment.
// Transfers use it one after another (each GPU's NIC moves one prompt's shard at a time, as a
// NIXL read of a whole request does), so a burst of long prompts queues for the link and the
// wait shows in the requests' kv_transfer segment.
//
// Layer-wise transfers (KvTransferOverlap::kLayerwise) were pushed while the prefill ran; what
// remains after the hand-off is the larger of the last layer's share and what the link could
// not move during the prefill. The link's own queue is not charged for the part that
// overlapped (the push happened before the decode instance knew of the request).
//
// Plain value; not thread-safe.
#pragma once

#include "sim/serving/disaggregation_spec.h"

namespace servesim {

class KvTransferLink {
 public:
  // Starts a transfer of `transfer_s` seconds (KvTransferSpec::transfer_s) asked for at now_s
  // and returns when it completes. prefill_start_s is when the request's prefill began;
  // num_layers the model's layers (layer-wise overlap). REQUIRES: transfer_s >= 0.
  double start(double now_s, double transfer_s, const KvTransferSpec& spec, double prefill_start_s,
               int num_layers);

  double busy_s() const { return busy_s_; }  // seconds the link spent moving KV
  int64_t transfers() const { return transfers_; }

 private:
  double free_at_s_ = 0;
  double busy_s_ = 0;
  int64_t transfers_ = 0;
};

}  // namespace servesim
