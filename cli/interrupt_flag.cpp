#include "cli/interrupt_flag.h"

#include <atomic>
#include <csignal>

namespace servesim {
namespace {

// Lock-free, hence safe to store from a signal handler.
std::atomic<bool> g_interrupted{false};
static_assert(std::atomic<bool>::is_always_lock_free);

struct sigaction g_previous {};

void on_sigint(int) {
  g_interrupted.store(true, std::memory_order_relaxed);
}

}  // namespace

InterruptFlag::InterruptFlag() {
  g_interrupted = false;
  struct sigaction action {};
  action.sa_handler = on_sigint;
  sigemptyset(&action.sa_mask);
  // One-shot: the handler is reset to the default on entry, so a second Ctrl-C kills.
  action.sa_flags = SA_RESETHAND;
  sigaction(SIGINT, &action, &g_previous);
}

InterruptFlag::~InterruptFlag() {
  sigaction(SIGINT, &g_previous, nullptr);
}

bool InterruptFlag::raised() const {
  return g_interrupted.load(std::memory_order_relaxed);
}

}  // namespace servesim
