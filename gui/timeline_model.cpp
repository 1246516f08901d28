#include "gui/timeline_model.h"

namespace servesim::gui {

TimelineModel::TimelineModel(QObject* parent) : QAbstractTableModel(parent) {}

void TimelineModel::set_points(std::vector<TimelinePoint> points) {
  beginResetModel();
  points_ = std::move(points);
  endResetModel();
}

double TimelineModel::value(int row, Column column) const {
  const TimelinePoint& p = points_.at(static_cast<size_t>(row));
  switch (column) {
    case kTime:
      return p.time_s;
    case kRunning:
      return p.running;
    case kWaiting:
      return p.waiting;
    case kKvUsage:
      return p.kv_usage * 100.0;
    case kTokens:
      return p.tokens_in_step;
    case kPreemptions:
      return p.preemptions_total;
    case kColumnCount:
      break;
  }
  return 0.0;
}

int TimelineModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(points_.size());
}

int TimelineModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : kColumnCount;
}

QVariant TimelineModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) {
    return {};
  }
  if (role != Qt::DisplayRole) return {};
  return value(index.row(), static_cast<Column>(index.column()));
}

QVariant TimelineModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
  switch (section) {
    case kTime:
      return tr("time_s");
    case kRunning:
      return tr("running");
    case kWaiting:
      return tr("waiting");
    case kKvUsage:
      return tr("kv_usage_percent");
    case kTokens:
      return tr("tokens_in_step");
    case kPreemptions:
      return tr("preemptions_total");
  }
  return {};
}

}  // namespace servesim::gui
