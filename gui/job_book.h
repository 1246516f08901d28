// JobBook: the GUI thread's ledger of background jobs for a JobLauncher — job ids, the stop flag
// each worker polls, its future, which job is current, and whether the user cancelled it. Starting
// a job supersedes every one before it (asked to stop; what it still delivers is stale), so only
// the newest job's results reach the views.
//
// Ownership: owns the futures and shares each stop flag with its worker. Thread-safety: GUI
// thread only; workers touch nothing but their stop flag.
#pragma once

#include <QFuture>
#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

namespace servesim::gui {

class JobBook {
 public:
  struct Ticket {
    uint64_t id = 0;
    std::shared_ptr<std::atomic<bool>> stop;  // the worker polls it
  };
  enum class Outcome { kStale, kCancelled, kCurrent };

  // Asks every job to stop and waits for them, so no worker outlives the book.
  ~JobBook();

  // Opens a new current job (ids 1, 2, ...): the ones before it are asked to stop.
  Ticket open();
  // Records the worker of `ticket`, once started.
  void add(const Ticket& ticket, QFuture<void> future);
  // Asks the current job to stop; finish() then says kCancelled.
  void cancel();
  // Whether `job` is the current one and still running (its progress is worth showing).
  bool is_running(uint64_t job) const { return busy_ && job == current_; }
  // `job` has delivered its last value: forgets it and says what to report.
  Outcome finish(uint64_t job);
  void wait_for_all();

  bool busy() const { return busy_; }
  uint64_t current() const { return current_; }

 private:
  struct Job {
    uint64_t id = 0;
    std::shared_ptr<std::atomic<bool>> stop;
    QFuture<void> future;
  };

  std::vector<Job> jobs_;  // started and not yet finished
  uint64_t next_ = 1;
  uint64_t current_ = 0;
  bool busy_ = false;
  bool cancelled_ = false;
};

}  // namespace servesim::gui
