// InFlightRequest: a request between its arrival at an engine and its leaving, with the times
// the serving loop records as steps go — first scheduled, first and last token — and the
// RequestRecord it becomes when the engine reports it finished. Shared by the simulator's
// Replica and engine/realtime's EngineServer so a simulated and a served request are recorded
// alike.
//
// Plain value; thread-compatible.
#pragma once

#include "engine/sched/request.h"
#include "sim/core/request_record.h"
#include "sim/workload/request_source.h"

namespace servesim {

struct InFlightRequest {
  RequestSpec spec;
  double first_scheduled_s = RequestRecord::kNever;  // seconds on the run's clock
  double first_token_s = RequestRecord::kNever;
  double last_token_s = RequestRecord::kNever;
  double host_load_s = 0;  // seconds waiting for host-tier KV before first scheduled

  // The record of the request as `done` says it left, at now_s, from replica `replica`; a
  // rejected request keeps no times.
  RequestRecord to_record(const FinishedRequest& done, int replica, double now_s) const;
};

}  // namespace servesim
