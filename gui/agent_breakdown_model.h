// AgentBreakdownModel: the sessions of agent runs side by side — for the current run and a
// baseline, the critical path's mean seconds per session by kind (LLM queue, prefill, decode,
// service, tools, cache; they sum to the mean E2E), the E2E p50/p95/p99, the first-token p50
// and the sessions completed and failed. The figures are the run's SessionSummary, which
// covers every session of the run (not only the ones the Gantt chart keeps).
//
// Baseline: each agent run added becomes the current one and the one it replaces becomes the
// baseline — two scenario variants run one after the other are compared without more ado;
// with the baseline pinned, new runs replace the current one only.
// Rows: the figures above; columns: Metric, then one per run (current, then baseline), headed
// by the run's name. Reset whole on every change. Thread-safety: GUI thread only.
#pragma once

#include <QAbstractTableModel>
#include <QString>
#include <array>
#include <optional>
#include <vector>

#include "sim/agent/session_metrics.h"

namespace servesim::gui {

class AgentBreakdownModel : public QAbstractTableModel {
  Q_OBJECT

 public:
  enum Row {
    kLlmQueue,
    kPrefill,
    kDecode,
    kService,
    kTools,
    kCache,
    kPathTotal,
    kE2eP50,
    kE2eP95,
    kE2eP99,
    kFirstTokenP50,
    kCompleted,
    kFailed,
    kRowCount
  };
  // The critical path's kinds, in the order the stacked bar draws them.
  static constexpr std::array<Row, 6> kPathRows = {kLlmQueue, kPrefill, kDecode,
                                                   kService,  kTools,   kCache};
  struct Run {
    QString name;  // the column header and the bar's label
    SessionSummary summary;
  };

  explicit AgentBreakdownModel(QObject* parent = nullptr);

  // A finished agent run becomes the current one; see the top for the baseline.
  void add_run(const QString& name, const SessionSummary& summary);
  void set_baseline_pinned(bool pinned);
  // In column order: the current run, then the baseline; empty before the first agent run.
  std::vector<const Run*> runs() const;
  const std::optional<Run>& current() const { return current_; }
  const std::optional<Run>& baseline() const { return baseline_; }
  // A row's figure of a summary: seconds for times (NaN without completed sessions), counts.
  static double value(Row row, const SessionSummary& summary);
  static QString row_name(Row row);

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation,
                      int role = Qt::DisplayRole) const override;

 private:
  std::optional<Run> current_;
  std::optional<Run> baseline_;
  bool pinned_ = false;
};

}  // namespace servesim::gui
