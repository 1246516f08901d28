#include "gui/time_breakdown_model.h"

namespace servesim::gui {

TimeBreakdownModel::TimeBreakdownModel(QObject* parent) : QAbstractTableModel(parent) {}

void TimeBreakdownModel::set_breakdown(const TimeBreakdown& breakdown) {
  beginResetModel();
  breakdown_ = breakdown;
  endResetModel();
}

void TimeBreakdownModel::clear() {
  set_breakdown(TimeBreakdown{});
}

const SegmentStats& TimeBreakdownModel::stats(int row) const {
  return breakdown_.segments.at(static_cast<size_t>(segment(row)));
}

double TimeBreakdownModel::value_ms(int row, Column column) const {
  const SegmentStats& s = stats(row);
  switch (column) {
    case kMean:
      return s.mean_s * 1e3;
    case kP50:
      return s.p50_s * 1e3;
    case kP95:
      return s.p95_s * 1e3;
    case kP99:
      return s.p99_s * 1e3;
    default:
      return 0.0;
  }
}

double TimeBreakdownModel::share_of_e2e(int row) const {
  return stats(row).share_of_e2e;
}

QString TimeBreakdownModel::column_name(Column column) {
  switch (column) {
    case kSegment:
      return tr("Segment");
    case kMean:
      return tr("mean");
    case kP50:
      return QStringLiteral("p50");
    case kP95:
      return QStringLiteral("p95");
    case kP99:
      return QStringLiteral("p99");
    case kShare:
      return tr("Share of E2E");
    case kColumnCount:
      break;
  }
  return {};
}

int TimeBreakdownModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() || !has_data() ? 0 : static_cast<int>(kRows.size());
}

int TimeBreakdownModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : kColumnCount;
}

QVariant TimeBreakdownModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) {
    return {};
  }
  const auto column = static_cast<Column>(index.column());
  if (role == Qt::TextAlignmentRole && column != kSegment) {
    return QVariant(Qt::AlignRight | Qt::AlignVCenter);
  }
  if (role != Qt::DisplayRole && role != Qt::EditRole) return {};
  if (column == kSegment) return QString::fromLatin1(to_string(segment(index.row())));
  if (column == kShare) {
    const double percent = share_of_e2e(index.row()) * 100.0;
    return role == Qt::EditRole ? QVariant(percent) : QVariant(QString::number(percent, 'f', 1));
  }
  const double ms = value_ms(index.row(), column);
  return role == Qt::EditRole ? QVariant(ms) : QVariant(QString::number(ms, 'f', 2));
}

QVariant TimeBreakdownModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (role != Qt::DisplayRole || orientation != Qt::Horizontal) return {};
  const auto column = static_cast<Column>(section);
  if (column == kSegment) return column_name(column);
  if (column == kShare) return column_name(column) + QStringLiteral(" (%)");
  return column_name(column) + QStringLiteral(" (ms)");
}

}  // namespace servesim::gui
