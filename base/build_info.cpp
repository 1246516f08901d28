#include "base/build_info.h"

namespace servesim {

std::string servesim_version() {
  return SERVESIM_VERSION;
}
std::string servesim_git_revision() {
  return SERVESIM_GIT_REVISION;
}

}  // namespace servesim
