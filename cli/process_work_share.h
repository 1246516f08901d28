// The processes one servesim command shares its work with (plan/work_share.h). Built with MPI
// (-DSERVESIM_MPI=ON, process_work_share_mpi.cpp) and started by mpirun, they are
// MPI_COMM_WORLD: MPI is initialised here and finalised when the returned object is
// destroyed, so keep it alive for the whole command and create at most one per process.
// Started any other way, or built without MPI (process_work_share_solo.cpp), the process
// is alone: rank 0 of 1, and MPI is never initialised (an MPI singleton would cost start-up
// time and print warnings in containers for nothing).
// Not thread-safe: call from the main thread.
#pragma once

#include <functional>
#include <memory>

#include "plan/work_share.h"

namespace servesim {

std::unique_ptr<WorkShare> join_process_work_share();

// Runs `job` on a freshly joined work share and returns its exit status. Every rank fails
// alike on bad input (the job is deterministic), so a ConfigError is rank 0's to print: it
// prints main's "error: ..." line and every rank returns 2. Rank 0 prints before MPI is
// finalised: finalising is where the ranks meet last, and once rank 1 has exited with 2 the
// launcher may kill rank 0 at any moment, its line unprinted.
int run_with_process_work_share(const std::function<int(WorkShare&)>& job);

}  // namespace servesim
