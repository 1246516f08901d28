// InterruptFlag: Ctrl-C (SIGINT) as a request to stop, for the long commands (simulate): while
// one is alive, the first SIGINT only raises the flag, which the command's Observer returns
// from should_stop(), so the run ends at its next check with what finished written and marked
// "stopped"; a second SIGINT ends the process at once (the default action is back).
//
// Ownership: one at a time per process; installs its handler on construction and restores the
// previous one on destruction. Thread-safety: raised() may be called from any thread (an
// atomic load, cheap enough for should_stop()).
#pragma once

namespace servesim {

class InterruptFlag {
 public:
  InterruptFlag();
  ~InterruptFlag();
  InterruptFlag(const InterruptFlag&) = delete;
  InterruptFlag& operator=(const InterruptFlag&) = delete;

  bool raised() const;
};

}  // namespace servesim
