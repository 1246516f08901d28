// SummaryModel: a run's MetricsSummary as a table — one row per figure (counts, throughput,
// latency percentiles in ms, goodput, cost) with its SLO and a pass/fail verdict where the
// scenario sets one. A latency SLO passes when the metric's p99 meets it (the p99 rows carry
// the verdict); the per-request SLO attainment and goodput rows give the finer picture.
//
// Columns: Metric, Value, SLO, Result. Rows are replaced wholesale by set_summary().
// Thread-safety: GUI thread only.
#pragma once

#include <QAbstractTableModel>
#include <QString>
#include <optional>
#include <vector>

#include "sim/metrics/metrics.h"

namespace servesim::gui {

class SummaryModel : public QAbstractTableModel {
  Q_OBJECT

 public:
  enum Column { kMetric, kValue, kSlo, kResult, kColumnCount };
  enum class Verdict { kNone, kPass, kFail };

  explicit SummaryModel(QObject* parent = nullptr);

  void set_summary(const MetricsSummary& summary, const SloSpec& slo);
  void clear();

  // The verdict of a row (kNone where no SLO applies).
  Verdict verdict(int row) const { return rows_.at(static_cast<size_t>(row)).verdict; }
  // The row of a metric by its label, or -1.
  int row_of(const QString& metric) const;

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation,
                      int role = Qt::DisplayRole) const override;

 private:
  struct Row {
    QString metric;
    QString value;
    QString slo;
    Verdict verdict = Verdict::kNone;
  };

  std::vector<Row> rows_;
};

}  // namespace servesim::gui
