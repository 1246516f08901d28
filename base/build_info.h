// Build facts recorded in every profile: servesim's version and the git revision the build
// was configured at ("unknown" outside a git checkout). Thread-safe.
#pragma once

#include <string>

namespace servesim {

std::string servesim_version();
std::string servesim_git_revision();

}  // namespace servesim
