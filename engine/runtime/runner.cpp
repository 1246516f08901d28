#include "engine/runtime/runner.h"

#include "kernels/sampler.h"

namespace servesim {

int32_t RunnerOutput::greedy_token(int sample, int vocab) const {
  return argmax(row(sample, vocab));
}

}  // namespace servesim
