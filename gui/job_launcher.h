// JobLauncher: runs background jobs for the GUI, one current job per launcher as far as the
// user is concerned, and is the one place of the rules every job follows (hotspot's): each
// launch gets a new job id (1, 2, ...); the job before it is superseded — asked to stop, and
// whatever it still delivers is dropped; cancel() asks the current job to stop and reports
// cancelled(job) once it has; a job that throws reports failed(job, one line). A job is a
// Work function on Qt's global thread pool; it talks back only through queued calls into
// this object, carrying plain values, so no simulation state is touched from two threads.
//
// Typed results travel without a template (Q_OBJECT cannot be one): a Work returns a
// Delivery, a call that emits the result's typed signal, and reports progress with calls that
// emit typed progress signals. SimulationRunner and SweepRunner are the thin subclasses that
// declare those signals and build the Work; this class decides whether each call still runs.
//
// Ownership: owns its jobs (JobBook); the destructor asks every job to stop and waits for it,
// so no worker outlives the launcher. Thread-safety: a QObject of the GUI thread; call it
// from there. A Work runs on a worker and touches nothing but its captured values and its
// Context; the calls it hands back run on the GUI thread.
// Invariants: only the current job's progress, result, failure or cancellation is ever
// reported, and each job reports exactly one of result, failed or cancelled unless it is
// superseded or the launcher is destroyed first.
#pragma once

#include <QElapsedTimer>
#include <QObject>
#include <QString>
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>

#include "gui/job_book.h"

namespace servesim::gui {

class JobLauncher : public QObject {
  Q_OBJECT

 public:
  // A call run on the GUI thread, and only while its job is current: emits a typed signal.
  using Delivery = std::function<void()>;

  // What a worker knows of its job. Copies share the stop flag.
  class Context {
   public:
    uint64_t job() const { return job_; }
    // The flag the worker polls; set when the job is cancelled or superseded.
    const std::shared_ptr<std::atomic<bool>>& stop() const { return stop_; }
    // Wall-clock seconds since the worker began the job.
    double elapsed_s() const;
    // Runs `report` on the GUI thread if the job is still the running one by then.
    void post_progress(Delivery report) const;

   private:
    friend class JobLauncher;
    Context(JobLauncher* launcher, const JobBook::Ticket& ticket);

    JobLauncher* launcher_;
    uint64_t job_;
    std::shared_ptr<std::atomic<bool>> stop_;
    QElapsedTimer wall_;
  };

  // A job's body, run on a worker. Returns the delivery of its result, or an empty Delivery
  // when it stopped before having one; throws ConfigError (or any std::exception) to fail.
  using Work = std::function<Delivery(Context)>;

  explicit JobLauncher(QObject* parent = nullptr);
  ~JobLauncher() override;

  // Asks the current job to stop; cancelled(job) follows once it has.
  void cancel();
  bool busy() const { return jobs_.busy(); }
  uint64_t current_job() const { return jobs_.current(); }
  // Waits until every job, superseded ones included, has returned. For tests and shutdown.
  void wait_for_all() { jobs_.wait_for_all(); }

 signals:
  // The current job could not run (for example the deployment does not fit); one line.
  void failed(quint64 job, const QString& message);
  void cancelled(quint64 job);

 protected:
  // Starts `work` in the background, superseding the job still running, and returns its id.
  uint64_t launch(Work work);

 private:
  void on_progress(uint64_t job, const Delivery& report);
  void on_done(uint64_t job, const Delivery& delivery, const QString& error);

  JobBook jobs_;  // last member: destroyed first, stopping and waiting for every worker
};

}  // namespace servesim::gui
