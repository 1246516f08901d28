// CompareController: the Compare tab's logic — it owns the tab's CompareModel, its
// CompareView and a SimulationRunner of its own, adds the result on display to the
// comparison, and runs scenario files for it one after another (a queue: each file's run
// starts when the one before has finished or failed), naming the files that do not load,
// validate or run. It also adds result folders (RunFolder: what simulate, engine run and
// loadtest write with --out), read on the spot, naming the ones that are not result folders.
// The window places the view in a tab and hands it the result on display and Cancel.
// The folders scenarios and run folders were last opened from are remembered between
// sessions (QSettings).
//
// Ownership: the model and runner are children of this object; the view is a widget whose
// Qt parent the window may change (into its tab widget), and this object deletes it if it
// still exists, so the view never outlives its model. Borrows the catalog, which must
// outlive it. Thread-safety: a QObject of the GUI thread.
// Invariant: running_ is empty exactly when no comparison run is in flight.
#pragma once

#include <QObject>
#include <QPointer>
#include <QString>
#include <QStringList>
#include <deque>
#include <functional>
#include <memory>

#include "gui/run_snapshot.h"
#include "models/catalog.h"
#include "sim/run/simulation.h"

class QWidget;

namespace servesim::gui {

class CompareModel;
class CompareView;
class SimulationRunner;

class CompareController : public QObject {
  Q_OBJECT

 public:
  // The result on display in the window; null before the first finished run.
  using ShownResult = std::function<std::shared_ptr<const RunSnapshot>()>;

  // The view is created as a child of `parent`, and so is this object. `open_dir` is where
  // the Open dialog starts before any folder was remembered.
  CompareController(const Catalog* catalog, ShownResult shown_result, QString open_dir,
                    QWidget* parent);
  ~CompareController() override;

  // Adds the result on display to the comparison set; false (and says why) before a run.
  bool add_shown_result();
  // Runs scenario files one after another and adds each result to the comparison set.
  // Files that do not load or validate are named in the view and skipped; false when none
  // could be queued.
  bool compare_files(const QStringList& paths);
  // Asks for scenario files, then compares them.
  void open_dialog();
  // Reads result folders and adds each to the comparison set, named after its folder; the
  // ones that do not read are named in the view. False when none was added.
  bool open_run_folders(const QStringList& dirs);
  // Asks for a result folder, then adds it.
  void open_folder_dialog();
  // Stops the run in flight and drops the files still queued.
  void cancel();
  bool busy() const;

  CompareModel* model() const { return model_; }
  CompareView* view() const;
  SimulationRunner* runner() const { return runner_; }

 signals:
  // A comparison run started or the last one ended: what Cancel would stop changed.
  void busy_changed();
  // The user picked files to compare: the tab wants to be on display.
  void files_chosen();

 private:
  struct Queued {
    QString name;
    SimulationConfig config;
  };

  void start_next();
  void on_finished(std::shared_ptr<const RunSnapshot> snapshot);
  void on_failed(quint64 job, const QString& message);
  void on_cancelled();

  const Catalog* catalog_;
  ShownResult shown_result_;
  QString open_dir_;
  CompareModel* model_;
  SimulationRunner* runner_;
  QPointer<CompareView> view_;
  std::deque<Queued> queue_;  // files still to run
  QString running_;           // the one running now; empty when idle
  QStringList errors_;        // of the files opened last
};

}  // namespace servesim::gui
