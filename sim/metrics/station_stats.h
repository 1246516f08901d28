// StationStats: what one queueing station of the service path (a gateway, an API server
// process group, a retrieval stage) did over a run — summary.json's "service.stations"
// entries and what the diagnosis reads to find a saturated CPU stage. Plain data; the
// station (sim/service/station.h) fills it from time integrals over the run.
#pragma once

#include <cstdint>
#include <string>

namespace servesim {

struct StationStats {
  std::string name;
  int workers = 0;
  uint64_t jobs = 0;          // jobs that completed service
  uint64_t rejected = 0;      // jobs refused because the queue was full
  double utilisation = 0;     // busy worker-seconds / (workers × elapsed), in [0, 1]
  double mean_queue = 0;      // time-averaged jobs waiting
  uint64_t max_queue = 0;     // most jobs waiting at once
  double mean_wait_s = 0;     // seconds a completed job waited before service
  double mean_service_s = 0;  // seconds of service per completed job
};

}  // namespace servesim
