// TradeoffController: the Trade-offs tab's logic — it owns the tab's TradeoffModel, its
// TradeoffView and the SweepRunner, starts a sweep of the document's scenario over the
// view's knob and values (parsed here, so bad values are explained before any worker
// starts), and tells the view what the sweep is doing. The window only places the view in a
// tab and hands over one-line status texts and Cancel.
// The knob and values are remembered between sessions (QSettings).
//
// Ownership: the model and runner are children of this object; the view is a widget whose
// Qt parent the window may change (into its tab widget), and this object deletes it if it
// still exists, so the view never outlives its model. Borrows the document, which must
// outlive it. Thread-safety: a QObject of the GUI thread.
#pragma once

#include <QObject>
#include <QPointer>
#include <QString>
#include <memory>

class QWidget;

namespace servesim::gui {

class ScenarioDocument;
class SweepRunner;
class TradeoffModel;
class TradeoffView;
struct SweepSnapshot;

class TradeoffController : public QObject {
  Q_OBJECT

 public:
  // The view is created as a child of `parent`, and so is this object.
  TradeoffController(const ScenarioDocument* document, QWidget* parent);
  ~TradeoffController() override;

  // Sweeps the view's knob over its values (superseding a running sweep). False, with the
  // reason in the view, when the scenario does not validate or the values do not parse.
  bool run_sweep();
  void cancel();
  bool busy() const;

  TradeoffModel* model() const { return model_; }
  TradeoffView* view() const;
  SweepRunner* runner() const { return runner_; }

 signals:
  // A sweep started or ended: what Cancel would stop changed.
  void busy_changed();
  // A line for the window's status bar.
  void status_message(const QString& text);

 private:
  void on_progress(quint64 job, int done, int total);
  void on_finished(std::shared_ptr<const SweepSnapshot> snapshot);
  // A sweep ended: the view and the window learn, with `message` in the tab.
  void end_sweep(const QString& message, bool error, const QString& status);

  const ScenarioDocument* document_;
  TradeoffModel* model_;
  SweepRunner* runner_;
  QPointer<TradeoffView> view_;
};

}  // namespace servesim::gui
