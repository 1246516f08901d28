// MainWindow: servesim-gui's window. The scenario editor docks on the left; the views of the
// latest result (Summary with the diagnosis, Memory, Timeline, Latency, Where time goes) are tabs
// in the centre, beside Trade-offs (a one-knob sweep of the scenario), Compare (several runs
// side by side) and Agents (an agent run's sessions: one as a Gantt chart, the breakdown across
// sessions beside the previous agent run's). The window builds the widgets, the menus and the
// toolbar, runs the scenario through its SimulationRunner (so it never waits for a simulation) and
// shows the result; the Trade-offs and Compare tabs are run by their controllers, which the window
// hands the document, the result on display, Cancel and its status bar. The Memory tab follows
// every edit at once (MemoryPlanModel computes the plan, no simulation). Window geometry, dock
// layout and recent files persist in QSettings.
//
// The public methods are the actions without their dialogs, so tests and main() can drive
// the window directly; the menu actions add file dialogs and prompts around them.
// Thread-safety: GUI thread only. Owns its document, runner, models, views and controllers.
#pragma once

#include <QList>
#include <QMainWindow>
#include <QString>
#include <memory>

#include "gui/run_snapshot.h"

class QAbstractItemModel;
class QAction;
class QLabel;
class QMenu;
class QProgressBar;
class QPushButton;
class QTabWidget;
class QTableView;

namespace servesim::gui {

class AgentBreakdownModel;
class AgentsView;
class CompareController;
class LatencyCdfModel;
class MemoryPlanModel;
class ScenarioDocument;
class ScenarioEditor;
class SessionGanttModel;
class SimulationRunner;
class SummaryModel;
class TimeBreakdownModel;
class DiagnosisView;
class TimelineModel;
class TradeoffController;

class MainWindow : public QMainWindow {
  Q_OBJECT

 public:
  enum Tab {
    kSummaryTab,
    kMemoryTab,
    kTimelineTab,
    kLatencyTab,
    kWhereTimeTab,
    kTradeoffsTab,
    kCompareTab,
    kAgentsTab,
    kTabCount
  };

  explicit MainWindow(QWidget* parent = nullptr);
  ~MainWindow() override;

  // Opens a scenario file (invalid ones too: the errors show in the editor). False when the
  // file cannot be read; the status bar says why.
  bool open_file(const QString& path);
  // Starts from a bundled scenario: its content, no file name (Save asks for one).
  bool open_template(const QString& path);
  bool save_to(const QString& path);
  // Starts a run of the current scenario (superseding a running one). False, with the reason
  // in the run banner, when the scenario does not validate.
  bool run();
  void cancel_run();

  // The `servesim simulate` command line equivalent to the saved scenario; on the Trade-offs
  // tab, the `servesim sweep` one with the tab's knob and values.
  QString cli_command() const;
  bool export_png(Tab tab, const QString& path);
  bool export_csv(Tab tab, const QString& path);

  ScenarioDocument* document() const { return document_; }
  ScenarioEditor* editor() const { return editor_; }
  SimulationRunner* runner() const { return runner_; }
  SummaryModel* summary_model() const { return summary_model_; }
  MemoryPlanModel* memory_model() const { return memory_model_; }
  TimelineModel* timeline_model() const { return timeline_model_; }
  LatencyCdfModel* latency_model() const { return latency_model_; }
  TimeBreakdownModel* time_breakdown_model() const { return time_breakdown_model_; }
  DiagnosisView* diagnosis_view() const { return diagnosis_view_; }
  SessionGanttModel* session_gantt_model() const { return session_gantt_model_; }
  AgentBreakdownModel* agent_breakdown_model() const { return agent_breakdown_model_; }
  AgentsView* agents_view() const { return agents_view_; }
  TradeoffController* tradeoffs() const { return tradeoffs_; }
  CompareController* compare() const { return compare_; }
  QTabWidget* tabs() const { return tabs_; }
  QProgressBar* progress_bar() const { return progress_; }
  QString banner_text() const;
  // The snapshot on display, or null before the first finished run.
  std::shared_ptr<const RunSnapshot> shown_result() const { return shown_; }

  // Folder of the bundled scenarios (configs/scenarios of the catalog directory).
  static QString bundled_scenarios_dir();

 protected:
  void closeEvent(QCloseEvent* event) override;

 private:
  // The toolbar's actions, in groups split by separators.
  struct ToolbarActions {
    QList<QAction*> file;        // open, save
    QList<QAction*> simulation;  // run, cancel, sweep, add to comparison
    QList<QAction*> output;      // PNG, CSV, CLI command
  };

  void build_centre();
  void build_status_bar();
  void build_file_menu(ToolbarActions* toolbar);
  void build_simulation_menu(ToolbarActions* toolbar);
  void build_view_menu();
  void build_toolbar(const ToolbarActions& actions);
  void connect_signals();
  void on_document_changed();
  void on_run_finished(std::shared_ptr<const RunSnapshot> snapshot);
  void show_agent_sessions(const std::shared_ptr<const RunSnapshot>& snapshot);
  void on_run_failed(quint64 job, const QString& message);
  void on_run_cancelled(quint64 job);
  void on_progress(quint64 job, double fraction, double sim_time_s);
  void set_busy(bool busy);
  void update_cancel_action();
  void cancel_all();
  void show_banner(const QString& text, bool error);
  void remember_file(const QString& path);
  void update_title();
  // Asks to save unsaved edits; false when the user cancels.
  bool maybe_save();
  void open_dialog();
  bool save_action();
  bool save_as_action();
  void export_png_action();
  void export_csv_action();
  void copy_cli_command();
  void fill_recent_menu();
  void fill_bundled_menu();
  QAbstractItemModel* tab_model(Tab tab) const;

  ScenarioDocument* document_;
  SimulationRunner* runner_;
  SummaryModel* summary_model_;
  MemoryPlanModel* memory_model_;
  TimelineModel* timeline_model_;
  LatencyCdfModel* latency_model_;
  TimeBreakdownModel* time_breakdown_model_;
  SessionGanttModel* session_gantt_model_;
  AgentBreakdownModel* agent_breakdown_model_;
  TradeoffController* tradeoffs_ = nullptr;
  CompareController* compare_ = nullptr;
  ScenarioEditor* editor_ = nullptr;
  QTabWidget* tabs_ = nullptr;
  QTableView* summary_view_ = nullptr;
  DiagnosisView* diagnosis_view_ = nullptr;
  AgentsView* agents_view_ = nullptr;
  QLabel* banner_ = nullptr;
  QLabel* status_ = nullptr;
  QProgressBar* progress_ = nullptr;
  QPushButton* cancel_button_ = nullptr;
  QAction* run_action_ = nullptr;
  QAction* cancel_action_ = nullptr;
  QMenu* recent_menu_ = nullptr;
  QMenu* bundled_menu_ = nullptr;
  std::shared_ptr<const RunSnapshot> shown_;
  bool edited_since_run_ = false;
};

}  // namespace servesim::gui
