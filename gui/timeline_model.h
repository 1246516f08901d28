// TimelineModel: a run's deployment-wide time series (RunSnapshot::timeline) as a table, one
// row per sample: time (s), running and waiting sequences, KV-cache usage (%), tokens in the
// last step, preemptions so far. Replaced wholesale by set_points().
// Thread-safety: GUI thread only.
#pragma once

#include <QAbstractTableModel>
#include <vector>

#include "gui/run_snapshot.h"

namespace servesim::gui {

class TimelineModel : public QAbstractTableModel {
  Q_OBJECT

 public:
  enum Column { kTime, kRunning, kWaiting, kKvUsage, kTokens, kPreemptions, kColumnCount };

  explicit TimelineModel(QObject* parent = nullptr);

  void set_points(std::vector<TimelinePoint> points);
  const std::vector<TimelinePoint>& points() const { return points_; }
  // The column's value at a row as a number (KV usage in percent).
  double value(int row, Column column) const;

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation,
                      int role = Qt::DisplayRole) const override;

 private:
  std::vector<TimelinePoint> points_;
};

}  // namespace servesim::gui
