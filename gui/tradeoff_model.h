// TradeoffModel: the points of a one-knob sweep (a SweepReport) as a table: the knob's value,
// p99 TTFT and TPOT (ms), output throughput (tokens/s), output tokens/s per GPU, tokens/s per
// user (1 / mean TPOT: the decode speed one user sees) and request rate, one row per point
// in sweep order; a point whose deployment could not run carries its reason in the last
// column and no figures. The Trade-offs view plots these columns; it computes nothing.
//
// Replaced wholesale by set_report(). Invariant: rowCount() == report().points.size().
// Thread-safety: GUI thread only.
#pragma once

#include <QAbstractTableModel>
#include <QString>

#include "plan/sweep.h"

namespace servesim::gui {

class TradeoffModel : public QAbstractTableModel {
  Q_OBJECT

 public:
  enum Column {
    kValue,
    kTtftP99,
    kTpotP99,
    kThroughput,
    kPerGpu,
    kPerUser,
    kRequestRate,
    kError,
    kColumnCount
  };

  explicit TradeoffModel(QObject* parent = nullptr);

  // A report of one axis (the GUI sweeps one knob at a time).
  void set_report(SweepReport report);
  const SweepReport& report() const { return report_; }
  // The swept key, e.g. "engine.max_num_seqs"; empty before the first sweep.
  QString key() const;
  // True when every point's value is a number, so the knob can be a value axis; otherwise
  // (GPU names, say) the views place points by their index.
  bool numeric_values() const { return numeric_; }
  // The knob's value of a row as a number (its index when the values are not all numbers).
  double x(int row) const;
  // A metric column's figure at a row, in the unit its header names; NaN for a failed point.
  double value(int row, Column column) const;
  static QString column_name(Column column);

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation,
                      int role = Qt::DisplayRole) const override;

 private:
  SweepReport report_;
  bool numeric_ = false;
};

}  // namespace servesim::gui
