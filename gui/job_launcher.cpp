#include "gui/job_launcher.h"

#include <QMetaObject>
#include <QtConcurrent/QtConcurrentRun>
#include <exception>
#include <utility>

#include "models/config_error.h"

namespace servesim::gui {

JobLauncher::Context::Context(JobLauncher* launcher, const JobBook::Ticket& ticket)
    : launcher_(launcher), job_(ticket.id), stop_(ticket.stop) {}

double JobLauncher::Context::elapsed_s() const {
  return static_cast<double>(wall_.nsecsElapsed()) * 1e-9;
}

void JobLauncher::Context::post_progress(Delivery report) const {
  // Queued calls into the launcher are discarded by Qt if it is gone; it waits for its
  // workers before that anyway.
  QMetaObject::invokeMethod(
      launcher_,
      [launcher = launcher_, job = job_, report = std::move(report)] {
        launcher->on_progress(job, report);
      },
      Qt::QueuedConnection);
}

JobLauncher::JobLauncher(QObject* parent) : QObject(parent) {}

JobLauncher::~JobLauncher() = default;

uint64_t JobLauncher::launch(Work work) {
  const JobBook::Ticket ticket = jobs_.open();
  QFuture<void> future =
      QtConcurrent::run([this, context = Context(this, ticket), work = std::move(work)]() mutable {
        context.wall_.start();
        Delivery delivery;
        QString error;
        try {
          delivery = work(context);
        } catch (const ConfigError& e) {
          error = QString::fromStdString(e.what());
        } catch (const std::exception& e) {
          error = QStringLiteral("internal error: ") + QString::fromStdString(e.what());
        }
        QMetaObject::invokeMethod(
            this,
            [this, job = context.job(), delivery = std::move(delivery), error] {
              on_done(job, delivery, error);
            },
            Qt::QueuedConnection);
      });
  jobs_.add(ticket, std::move(future));
  return ticket.id;
}

void JobLauncher::cancel() {
  jobs_.cancel();
}

void JobLauncher::on_progress(uint64_t job, const Delivery& report) {
  if (jobs_.is_running(job)) report();
}

void JobLauncher::on_done(uint64_t job, const Delivery& delivery, const QString& error) {
  const JobBook::Outcome outcome = jobs_.finish(job);
  if (outcome == JobBook::Outcome::kStale) return;  // superseded: its results are stale
  if (outcome == JobBook::Outcome::kCancelled) {
    emit cancelled(job);
  } else if (!delivery) {
    emit failed(job, error);
  } else {
    delivery();
  }
}

}  // namespace servesim::gui
