#include "gui/job_book.h"

#include <algorithm>

namespace servesim::gui {

JobBook::~JobBook() {
  for (Job& job : jobs_) job.stop->store(true);
  wait_for_all();
}

JobBook::Ticket JobBook::open() {
  for (Job& job : jobs_) job.stop->store(true);
  current_ = next_++;
  busy_ = true;
  cancelled_ = false;
  return {current_, std::make_shared<std::atomic<bool>>(false)};
}

void JobBook::add(const Ticket& ticket, QFuture<void> future) {
  jobs_.push_back({ticket.id, ticket.stop, std::move(future)});
}

void JobBook::cancel() {
  if (!busy_) return;
  cancelled_ = true;
  for (Job& job : jobs_) {
    if (job.id == current_) job.stop->store(true);
  }
}

JobBook::Outcome JobBook::finish(uint64_t job) {
  // The job's thread has returned its last value; forget it.
  auto it = std::find_if(jobs_.begin(), jobs_.end(), [job](const Job& j) { return j.id == job; });
  if (it != jobs_.end()) {
    it->future.waitForFinished();
    jobs_.erase(it);
  }
  if (job != current_) return Outcome::kStale;
  busy_ = false;
  return cancelled_ ? Outcome::kCancelled : Outcome::kCurrent;
}

void JobBook::wait_for_all() {
  for (Job& job : jobs_) job.future.waitForFinished();
}

}  // namespace servesim::gui
