// AgentsView: the Agents tab — for a run of an agent workload, a session picker (by id, the
// median-E2E session first) above that session's Gantt chart (one row per call, its bar
// stacked from its parts: service path, LLM queue, prefill, decode, tool, cache lookup; the
// critical path's bars outlined in full colour, the others faded; hovering a bar gives its
// times), and below it the breakdown across all sessions of the current run and its baseline:
// the critical path's mean seconds by kind as one stacked bar per run, beside the table of
// figures and a "Pin baseline" box. A run without agent sessions shows a one-line note instead.
//
// Redraws when its models are reset; computes nothing. The window calls set_has_sessions()
// after giving the models a run. Thread-safety: GUI thread only. Borrows the models, which must
// outlive the view.
#pragma once

#include <QString>
#include <QWidget>

class QChartView;
class QCheckBox;
class QComboBox;
class QLabel;

namespace servesim::gui {

class AgentBreakdownModel;
class SessionGanttModel;

class AgentsView : public QWidget {
  Q_OBJECT

 public:
  AgentsView(SessionGanttModel* gantt, AgentBreakdownModel* breakdown, QWidget* parent = nullptr);

  // Whether the run on display has agent sessions: shows the charts, or the note. Refills the
  // session picker from the Gantt model.
  void set_has_sessions(bool has_sessions);
  bool has_sessions() const { return has_sessions_; }

  QComboBox* session_picker() const { return picker_; }
  QCheckBox* pin_baseline() const { return pin_; }
  QChartView* gantt_chart() const { return gantt_chart_; }
  QChartView* breakdown_chart() const { return breakdown_chart_; }
  QString note() const;
  // The hover text of a Gantt row's bar.
  QString tooltip(int row) const;

 private:
  void redraw_gantt();
  void redraw_breakdown();

  SessionGanttModel* gantt_;
  AgentBreakdownModel* breakdown_;
  QLabel* note_;
  QWidget* content_;
  QComboBox* picker_;
  QLabel* kept_;
  QCheckBox* pin_;
  QChartView* gantt_chart_;
  QChartView* breakdown_chart_;
  bool has_sessions_ = false;
};

}  // namespace servesim::gui
