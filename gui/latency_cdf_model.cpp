#include "gui/latency_cdf_model.h"

namespace servesim::gui {

LatencyCdfModel::LatencyCdfModel(QObject* parent) : QAbstractTableModel(parent) {}

void LatencyCdfModel::set_data(std::vector<CdfPoint> points, const MetricsSummary& summary) {
  beginResetModel();
  points_ = std::move(points);
  summary_ = summary;
  endResetModel();
}

double LatencyCdfModel::value_ms(int row, Column column) const {
  const CdfPoint& p = points_.at(static_cast<size_t>(row));
  switch (column) {
    case kPercentile:
      return p.quantile * 100.0;
    case kTtft:
      return p.ttft_s * 1e3;
    case kTpot:
      return p.tpot_s * 1e3;
    case kE2e:
      return p.e2e_s * 1e3;
    case kColumnCount:
      break;
  }
  return 0.0;
}

std::array<LatencyCdfModel::Mark, 3> LatencyCdfModel::marks(Column column) const {
  const LatencyStats* s = &summary_.e2e;
  if (column == kTtft) s = &summary_.ttft;
  if (column == kTpot) s = &summary_.tpot;
  return {Mark{50, s->p50_s * 1e3}, Mark{90, s->p90_s * 1e3}, Mark{99, s->p99_s * 1e3}};
}

QString LatencyCdfModel::metric_name(Column column) {
  switch (column) {
    case kTtft:
      return QStringLiteral("TTFT");
    case kTpot:
      return QStringLiteral("TPOT");
    case kE2e:
      return QStringLiteral("E2E");
    default:
      return QStringLiteral("percentile");
  }
}

int LatencyCdfModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(points_.size());
}

int LatencyCdfModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : kColumnCount;
}

QVariant LatencyCdfModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) {
    return {};
  }
  if (role != Qt::DisplayRole) return {};
  return value_ms(index.row(), static_cast<Column>(index.column()));
}

QVariant LatencyCdfModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
  if (section == kPercentile) return QStringLiteral("percentile");
  return metric_name(static_cast<Column>(section)) + QStringLiteral("_ms");
}

}  // namespace servesim::gui
