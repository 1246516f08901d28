// TimeBreakdownModel: a run's "where the time went" (TimeBreakdown, summary.json's
// "where_time_went") as a table — one row per segment of the request path, in path order
// (retry, network, gateway, frontend, pre_model, engine_queue, prefill, decode, stream), with
// its mean, p50, p95 and p99 in milliseconds and its share of the mean E2E in percent. The
// "Where time goes" chart stacks these rows per statistic.
//
// Columns: Segment, Mean, p50, p95, p99, Share of E2E. Rows are replaced by set_breakdown().
// Thread-safety: GUI thread only.
#pragma once

#include <QAbstractTableModel>
#include <QString>
#include <array>

#include "sim/metrics/time_breakdown.h"

namespace servesim::gui {

class TimeBreakdownModel : public QAbstractTableModel {
  Q_OBJECT

 public:
  enum Column { kSegment, kMean, kP50, kP95, kP99, kShare, kColumnCount };
  // The segments that make up E2E, in the order a request meets them.
  static constexpr std::array<Segment, 10> kRows = {
      Segment::kRetry,    Segment::kPool,     Segment::kNetwork,     Segment::kGateway,
      Segment::kFrontend, Segment::kPreModel, Segment::kEngineQueue, Segment::kPrefill,
      Segment::kDecode,   Segment::kStream};

  explicit TimeBreakdownModel(QObject* parent = nullptr);

  void set_breakdown(const TimeBreakdown& breakdown);
  void clear();

  const TimeBreakdown& breakdown() const { return breakdown_; }
  // Whether a run with at least one ok request is shown.
  bool has_data() const { return breakdown_.count > 0; }
  Segment segment(int row) const { return kRows.at(static_cast<size_t>(row)); }
  // Milliseconds of a statistic column (kMean … kP99) of a row.
  double value_ms(int row, Column column) const;
  // The row's share of the mean E2E, 0..1.
  double share_of_e2e(int row) const;
  static QString column_name(Column column);

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation,
                      int role = Qt::DisplayRole) const override;

 private:
  const SegmentStats& stats(int row) const;

  TimeBreakdown breakdown_;
};

}  // namespace servesim::gui
