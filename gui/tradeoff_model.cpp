#include "gui/tradeoff_model.h"

#include <QBrush>
#include <QColor>
#include <cmath>
#include <limits>

#include "gui/error_style.h"

namespace servesim::gui {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

}  // namespace

TradeoffModel::TradeoffModel(QObject* parent) : QAbstractTableModel(parent) {}

void TradeoffModel::set_report(SweepReport report) {
  beginResetModel();
  report_ = std::move(report);
  numeric_ = !report_.points.empty();
  for (const SweepPoint& p : report_.points) {
    bool ok = false;
    if (!p.values.empty()) QString::fromStdString(p.values.front()).toDouble(&ok);
    numeric_ = numeric_ && ok;
  }
  endResetModel();
}

QString TradeoffModel::key() const {
  return report_.axes.empty() ? QString() : QString::fromStdString(report_.axes.front().key);
}

double TradeoffModel::x(int row) const {
  if (row < 0 || row >= rowCount()) return kNaN;
  if (!numeric_) return row;
  return QString::fromStdString(report_.points[row].values.front()).toDouble();
}

double TradeoffModel::value(int row, Column column) const {
  if (row < 0 || row >= rowCount()) return kNaN;
  const SweepPoint& p = report_.points[row];
  if (!p.error.empty()) return kNaN;
  const MetricsSummary& s = p.result.summary;
  switch (column) {
    case kValue:
      return x(row);
    case kTtftP99:
      return s.ttft.p99_s * 1e3;
    case kTpotP99:
      return s.tpot.p99_s * 1e3;
    case kThroughput:
      return s.output_throughput;
    case kPerGpu:
      return s.output_throughput_per_gpu;
    case kPerUser:
      return s.tpot.mean_s > 0 ? 1.0 / s.tpot.mean_s : kNaN;
    case kRequestRate:
      return s.request_throughput;
    case kError:
    case kColumnCount:
      break;
  }
  return kNaN;
}

QString TradeoffModel::column_name(Column column) {
  switch (column) {
    case kValue:
      return tr("Value");
    case kTtftP99:
      return tr("TTFT p99 (ms)");
    case kTpotP99:
      return tr("TPOT p99 (ms)");
    case kThroughput:
      return tr("Output tok/s");
    case kPerGpu:
      return tr("Output tok/s per GPU");
    case kPerUser:
      return tr("Tok/s per user");
    case kRequestRate:
      return tr("Req/s");
    case kError:
      return tr("Error");
    case kColumnCount:
      break;
  }
  return {};
}

int TradeoffModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(report_.points.size());
}

int TradeoffModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : kColumnCount;
}

QVariant TradeoffModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) {
    return {};
  }
  const SweepPoint& p = report_.points[index.row()];
  const auto column = static_cast<Column>(index.column());
  if (role == Qt::DisplayRole) {
    if (column == kValue) return QString::fromStdString(p.values.front());
    if (column == kError) return QString::fromStdString(p.error);
    const double v = value(index.row(), column);
    if (std::isnan(v)) return QString();
    const int decimals = column == kTpotP99 || column == kRequestRate ? 2 : 1;
    return QString::number(v, 'f', decimals);
  }
  if (role == Qt::TextAlignmentRole && column != kError) {
    return QVariant::fromValue(Qt::AlignRight | Qt::AlignVCenter);
  }
  if (role == Qt::ForegroundRole && column == kError) return error_brush();
  return {};
}

QVariant TradeoffModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
  if (section == kValue && !key().isEmpty()) return key();
  return column_name(static_cast<Column>(section));
}

}  // namespace servesim::gui
