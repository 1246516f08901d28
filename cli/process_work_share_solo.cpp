// Built when SERVESIM_MPI is off: every process is alone.
#include "cli/process_work_share.h"

namespace servesim {

std::unique_ptr<WorkShare> join_process_work_share() {
  return std::make_unique<SoloWorkShare>();
}

}  // namespace servesim
