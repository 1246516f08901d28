#include "gui/compare_controller.h"

#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QSettings>
#include <QWidget>
#include <nlohmann/json.hpp>
#include <utility>

#include "gui/compare_model.h"
#include "gui/compare_view.h"
#include "gui/simulation_runner.h"
#include "models/config_error.h"
#include "sim/metrics/run_folder.h"
#include "sim/scenario/scenario.h"

namespace servesim::gui {
namespace {

const char* const kCompareDirKey = "compare/dir";
const char* const kRunFolderDirKey = "compare/run_folder_dir";

}  // namespace

CompareController::CompareController(const Catalog* catalog, ShownResult shown_result,
                                     QString open_dir, QWidget* parent)
    : QObject(parent),
      catalog_(catalog),
      shown_result_(std::move(shown_result)),
      open_dir_(std::move(open_dir)),
      model_(new CompareModel(this)),
      runner_(new SimulationRunner(this)),
      view_(new CompareView(model_, parent)) {
  connect(view_, &CompareView::add_requested, this, [this] { add_shown_result(); });
  connect(view_, &CompareView::open_requested, this, &CompareController::open_dialog);
  connect(view_, &CompareView::open_folder_requested, this, &CompareController::open_folder_dialog);
  connect(runner_, &SimulationRunner::finished, this, &CompareController::on_finished);
  connect(runner_, &SimulationRunner::failed, this, &CompareController::on_failed);
  connect(runner_, &SimulationRunner::cancelled, this, &CompareController::on_cancelled);
}

// The view sits in the window's tabs by now; it must not outlive the model it reads.
CompareController::~CompareController() {
  delete view_;
}

CompareView* CompareController::view() const {
  return view_;
}

bool CompareController::busy() const {
  return runner_->busy();
}

bool CompareController::add_shown_result() {
  const std::shared_ptr<const RunSnapshot> shown = shown_result_();
  if (!shown) {
    view_->show_message(tr("Nothing to add yet: run the scenario first (Ctrl+R)."), true);
    return false;
  }
  model_->add(CompareModel::entry_of(*shown, QString::fromStdString(shown->name)));
  view_->show_message(tr("Added %1").arg(model_->entries().back().name), false);
  return true;
}

bool CompareController::compare_files(const QStringList& paths) {
  errors_.clear();
  int queued = 0;
  for (const QString& path : paths) {
    try {
      // A scenario without a "name" is named after its file.
      Scenario scenario = load_scenario(path.toStdString(), {}, *catalog_);
      queue_.push_back({QString::fromStdString(scenario.name), std::move(scenario.config)});
      ++queued;
    } catch (const ConfigError& e) {
      errors_ << QString::fromStdString(e.what());
    } catch (const nlohmann::json::exception& e) {
      errors_ << QFileInfo(path).fileName() + QStringLiteral(": ") + e.what();
    }
  }
  if (!paths.isEmpty()) QSettings().setValue(kCompareDirKey, QFileInfo(paths.front()).path());
  if (running_.isEmpty()) start_next();
  if (queued == 0) {
    view_->show_message(tr("Nothing to compare: %1").arg(errors_.join("; ")), true);
  }
  return queued > 0;
}

void CompareController::open_dialog() {
  const QString start = QSettings().value(kCompareDirKey, open_dir_).toString();
  const QStringList paths =
      QFileDialog::getOpenFileNames(view_->window(), tr("Compare scenarios"), start,
                                    tr("Scenario files (*.json);;All files (*)"));
  if (paths.isEmpty()) return;
  emit files_chosen();
  compare_files(paths);
}

bool CompareController::open_run_folders(const QStringList& dirs) {
  QStringList added;
  QStringList failed;
  for (const QString& dir : dirs) {
    try {
      const RunFolder run = read_run_folder(dir.toStdString());
      const QString name = QDir(QString::fromStdString(run.path)).dirName();
      model_->add(CompareModel::entry_of(run, name));
      added << model_->entries().back().name;
    } catch (const ConfigError& e) {
      failed << QString::fromStdString(e.what());
    }
  }
  if (!dirs.isEmpty()) QSettings().setValue(kRunFolderDirKey, QFileInfo(dirs.front()).path());
  QString text = added.isEmpty() ? tr("Nothing added.") : tr("Added %1").arg(added.join(", "));
  if (!failed.isEmpty()) text += tr(" Not a result folder: %1").arg(failed.join("; "));
  view_->show_message(text, !failed.isEmpty());
  return !added.isEmpty();
}

void CompareController::open_folder_dialog() {
  const QString start = QSettings().value(kRunFolderDirKey, open_dir_).toString();
  const QString dir = QFileDialog::getExistingDirectory(
      view_->window(), tr("Open a run folder (written with --out)"), start);
  if (dir.isEmpty()) return;
  emit files_chosen();
  open_run_folders({dir});
}

void CompareController::cancel() {
  if (!runner_->busy() && queue_.empty()) return;
  queue_.clear();
  runner_->cancel();
}

void CompareController::start_next() {
  if (queue_.empty()) {
    running_.clear();
    emit busy_changed();
    return;
  }
  Queued next = std::move(queue_.front());
  queue_.pop_front();
  running_ = next.name;
  runner_->start(std::move(next.config), next.name.toStdString());
  emit busy_changed();
  QString text =
      tr("Running %1 for the comparison (%2 more queued)…").arg(running_).arg(queue_.size());
  if (!errors_.isEmpty()) text += tr(" Skipped: %1").arg(errors_.join("; "));
  view_->show_message(text, !errors_.isEmpty());
}

void CompareController::on_finished(std::shared_ptr<const RunSnapshot> snapshot) {
  model_->add(CompareModel::entry_of(*snapshot, running_));
  view_->show_message(tr("Added %1").arg(model_->entries().back().name), false);
  start_next();
}

void CompareController::on_failed(quint64, const QString& message) {
  errors_ << running_ + QStringLiteral(": ") + message;
  view_->show_message(tr("Could not run %1").arg(errors_.join("; ")), true);
  start_next();
}

void CompareController::on_cancelled() {
  running_.clear();
  emit busy_changed();
  view_->show_message(tr("Comparison runs cancelled"), false);
}

}  // namespace servesim::gui
