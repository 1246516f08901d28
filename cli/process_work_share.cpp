// The part of process_work_share.h that both implementations share.
#include "cli/process_work_share.h"

#include <iostream>

#include "models/config_error.h"

namespace servesim {

int run_with_process_work_share(const std::function<int(WorkShare&)>& job) {
  const std::unique_ptr<WorkShare> share = join_process_work_share();
  try {
    return job(*share);
  } catch (const ConfigError& e) {
    if (share->rank() == 0) std::cerr << "error: " << e.what() << std::endl;
    return 2;
  }
}

}  // namespace servesim
