#include "sim/serving/host_kv_link.h"

#include <algorithm>
#include <stdexcept>

namespace servesim {

HostKvLink::HostKvLink(double bandwidth_Bps, double latency_s)
    : bandwidth_Bps_(bandwidth_Bps), latency_s_(latency_s) {
  if (!(bandwidth_Bps > 0) || !(latency_s >= 0)) {
    throw std::invalid_argument("HostKvLink: need bandwidth > 0 and latency >= 0");
  }
}

double HostKvLink::start(Direction& d, double now_s, double bytes) const {
  const double duration_s = latency_s_ + bytes / bandwidth_Bps_;
  d.free_at_s = std::max(d.free_at_s, now_s) + duration_s;
  d.busy_s += duration_s;
  d.bytes += bytes;
  ++d.count;
  return d.free_at_s;
}

double HostKvLink::load(double now_s, double bytes) {
  return start(loads_, now_s, bytes);
}

double HostKvLink::store(double now_s, double bytes) {
  return start(stores_, now_s, bytes);
}

}  // namespace servesim
