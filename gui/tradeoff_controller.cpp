#include "gui/tradeoff_controller.h"

#include <QSettings>
#include <QWidget>
#include <optional>
#include <utility>

#include "gui/scenario_document.h"
#include "gui/sweep_runner.h"
#include "gui/tradeoff_model.h"
#include "gui/tradeoff_view.h"
#include "models/config_error.h"
#include "plan/sweep.h"

namespace servesim::gui {
namespace {

const char* const kSweepKeyKey = "sweep/key";
const char* const kSweepValuesKey = "sweep/values";

}  // namespace

TradeoffController::TradeoffController(const ScenarioDocument* document, QWidget* parent)
    : QObject(parent),
      document_(document),
      model_(new TradeoffModel(this)),
      runner_(new SweepRunner(this)),
      view_(new TradeoffView(model_, parent)) {
  connect(view_, &TradeoffView::run_requested, this, [this] { run_sweep(); });
  connect(view_, &TradeoffView::cancel_requested, this, &TradeoffController::cancel);
  connect(runner_, &SweepRunner::progress, this, &TradeoffController::on_progress);
  connect(runner_, &SweepRunner::finished, this, &TradeoffController::on_finished);
  connect(runner_, &SweepRunner::failed, this, [this](quint64 job, const QString& message) {
    end_sweep(tr("Sweep #%1 failed: %2").arg(job).arg(message), true,
              tr("Sweep #%1 failed").arg(job));
  });
  connect(runner_, &SweepRunner::cancelled, this, [this](quint64 job) {
    end_sweep(tr("Sweep #%1 cancelled; the charts keep the previous sweep").arg(job), false,
              tr("Sweep #%1 cancelled").arg(job));
  });
  const QSettings settings;
  const QString key =
      settings.value(kSweepKeyKey, TradeoffView::suggested_keys().front()).toString();
  view_->set_knob(key,
                  settings.value(kSweepValuesKey, TradeoffView::suggested_values(key)).toString());
}

// The view sits in the window's tabs by now; it must not outlive the model it reads.
TradeoffController::~TradeoffController() {
  delete view_;
}

TradeoffView* TradeoffController::view() const {
  return view_;
}

bool TradeoffController::busy() const {
  return runner_->busy();
}

bool TradeoffController::run_sweep() {
  const std::optional<Scenario>& scenario = document_->scenario();
  if (!scenario) {
    view_->show_message(tr("Cannot sweep: %1").arg(document_->error()), true);
    return false;
  }
  const QString key = view_->key();
  const QString values = view_->values();
  SweepOptions options;
  size_t points = 0;
  try {
    options.axes = {parse_sweep_axis((key + QLatin1Char('=') + values).toStdString())};
    points = sweep_points(options.axes).size();
  } catch (const ConfigError& e) {
    view_->show_message(QString::fromStdString(e.what()), true);
    return false;
  }
  QSettings settings;
  settings.setValue(kSweepKeyKey, key);
  settings.setValue(kSweepValuesKey, values);
  const uint64_t job = runner_->start(*document_->json(), document_->base_dir().toStdString(),
                                      document_->origin().toStdString(), std::move(options));
  view_->set_busy(true);
  view_->show_message(tr("Sweep #%1: %2 over %3 points of %4…")
                          .arg(job)
                          .arg(key)
                          .arg(points)
                          .arg(QString::fromStdString(scenario->name)),
                      false);
  emit busy_changed();
  return true;
}

void TradeoffController::cancel() {
  if (!runner_->busy()) return;
  runner_->cancel();
  view_->show_message(tr("Cancelling the sweep…"), false);
}

void TradeoffController::on_progress(quint64 job, int done, int total) {
  view_->set_progress(done, total);
  emit status_message(tr("Sweep #%1: %2 of %3 points").arg(job).arg(done).arg(total));
}

void TradeoffController::on_finished(std::shared_ptr<const SweepSnapshot> snapshot) {
  model_->set_report(snapshot->report);
  int failed = 0;
  QString first_error;
  for (const SweepPoint& p : snapshot->report.points) {
    if (p.error.empty()) continue;
    if (failed++ == 0) first_error = QString::fromStdString(p.error);
  }
  QString text = tr("Sweep #%1: %2 points of %3 in %4 s wall")
                     .arg(snapshot->job)
                     .arg(snapshot->report.points.size())
                     .arg(QString::fromStdString(snapshot->report.scenario))
                     .arg(snapshot->wall_s, 0, 'f', 2);
  if (failed > 0) text += tr("; %1 could not run (%2)").arg(failed).arg(first_error);
  end_sweep(text, false, tr("Sweep #%1 finished").arg(snapshot->job));
}

void TradeoffController::end_sweep(const QString& message, bool error, const QString& status) {
  view_->set_busy(false);
  emit busy_changed();
  view_->show_message(message, error);
  emit status_message(status);
}

}  // namespace servesim::gui
