// LatencyCdfModel: a run's TTFT, TPOT and E2E distributions (RunSnapshot::cdf) as a table,
// one row per quantile, latencies in ms, plus the summary's p50/p90/p99 to mark on the
// plots (taken from MetricsSummary, so the marks are exactly the figures the Summary shows).
// Replaced wholesale by set_data(). Thread-safety: GUI thread only.
#pragma once

#include <QAbstractTableModel>
#include <array>
#include <vector>

#include "gui/run_snapshot.h"
#include "sim/metrics/metrics.h"

namespace servesim::gui {

class LatencyCdfModel : public QAbstractTableModel {
  Q_OBJECT

 public:
  enum Column { kPercentile, kTtft, kTpot, kE2e, kColumnCount };
  struct Mark {
    double percentile = 0.0;  // 50, 90, 99
    double value_ms = 0.0;
  };

  explicit LatencyCdfModel(QObject* parent = nullptr);

  void set_data(std::vector<CdfPoint> points, const MetricsSummary& summary);
  const std::vector<CdfPoint>& points() const { return points_; }
  // Latency in ms of a metric column at a row.
  double value_ms(int row, Column column) const;
  // p50, p90, p99 of a metric column (NaN values where the run had none).
  std::array<Mark, 3> marks(Column column) const;
  static QString metric_name(Column column);

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation,
                      int role = Qt::DisplayRole) const override;

 private:
  std::vector<CdfPoint> points_;
  MetricsSummary summary_;
};

}  // namespace servesim::gui
