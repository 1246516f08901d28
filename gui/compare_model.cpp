#include "gui/compare_model.h"

#include <cmath>
#include <limits>

#include "sim/metrics/percentile.h"

namespace servesim::gui {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
// Quantiles a folder's CDF is sampled at (RunRecorder::cdf's default).
constexpr int kFolderCdfPoints = 200;

int setup_int(const nlohmann::json& setup, const char* key) {
  const auto it = setup.find(key);
  return it != setup.end() && it->is_number_integer() ? it->get<int>() : 0;
}

double quantile_of(const std::vector<double>& sorted, double q) {
  return sorted.empty() ? kNaN : percentile_sorted(sorted, q * 100);
}

}  // namespace

CompareModel::CompareModel(QObject* parent) : QAbstractTableModel(parent) {}

CompareModel::Entry CompareModel::entry_of(const RunSnapshot& snapshot, const QString& name) {
  Entry e;
  e.name = name;
  e.summary = snapshot.result.summary;
  e.num_gpus = snapshot.plan.parallel.total_gpus();
  e.cdf = snapshot.cdf;
  return e;
}

CompareModel::Entry CompareModel::entry_of(const RunFolder& run, const QString& name) {
  Entry e;
  e.name = name;
  e.summary = run.metrics_summary();
  e.num_gpus = setup_int(run.setup, "tensor_parallel_size") *
               setup_int(run.setup, "pipeline_parallel_size") *
               setup_int(run.setup, "data_parallel_size");
  if (run.ttft_s.empty()) return e;
  for (int i = 0; i <= kFolderCdfPoints; ++i) {
    const double q = static_cast<double>(i) / kFolderCdfPoints;
    e.cdf.push_back({.quantile = q,
                     .ttft_s = quantile_of(run.ttft_s, q),
                     .tpot_s = quantile_of(run.tpot_s, q),
                     .e2e_s = quantile_of(run.e2e_s, q)});
  }
  return e;
}

QString CompareModel::unique_name(const QString& name, int except_row) const {
  auto taken = [this, except_row](const QString& candidate) {
    for (int r = 0; r < rowCount(); ++r) {
      if (r != except_row && entries_[r].name == candidate) return true;
    }
    return false;
  };
  if (!taken(name)) return name;
  for (int n = 2;; ++n) {
    const QString candidate = QStringLiteral("%1 (%2)").arg(name).arg(n);
    if (!taken(candidate)) return candidate;
  }
}

void CompareModel::add(Entry entry) {
  entry.name = unique_name(entry.name);
  const int row = rowCount();
  beginInsertRows({}, row, row);
  entries_.push_back(std::move(entry));
  endInsertRows();
  emit entries_changed();
}

void CompareModel::remove(int row) {
  if (row < 0 || row >= rowCount()) return;
  beginRemoveRows({}, row, row);
  entries_.erase(entries_.begin() + row);
  endRemoveRows();
  emit entries_changed();
}

double CompareModel::value(int row, Column column) const {
  if (row < 0 || row >= rowCount()) return kNaN;
  const Entry& e = entries_[row];
  const MetricsSummary& s = e.summary;
  switch (column) {
    case kGpus:
      return e.num_gpus > 0 ? e.num_gpus : kNaN;
    case kTtftP50:
      return s.ttft.p50_s * 1e3;
    case kTtftP99:
      return s.ttft.p99_s * 1e3;
    case kTpotP50:
      return s.tpot.p50_s * 1e3;
    case kTpotP99:
      return s.tpot.p99_s * 1e3;
    case kE2eP50:
      return s.e2e.p50_s * 1e3;
    case kE2eP99:
      return s.e2e.p99_s * 1e3;
    case kRequestRate:
      return s.request_throughput;
    case kThroughput:
      return s.output_throughput;
    case kPerGpu:
      return s.output_throughput_per_gpu;
    case kCost:
      return s.cost_per_million_tokens;
    case kScenario:
    case kColumnCount:
      break;
  }
  return kNaN;
}

QString CompareModel::column_name(Column column) {
  switch (column) {
    case kScenario:
      return tr("Scenario");
    case kGpus:
      return tr("GPUs");
    case kTtftP50:
      return tr("TTFT p50 (ms)");
    case kTtftP99:
      return tr("TTFT p99 (ms)");
    case kTpotP50:
      return tr("TPOT p50 (ms)");
    case kTpotP99:
      return tr("TPOT p99 (ms)");
    case kE2eP50:
      return tr("E2E p50 (ms)");
    case kE2eP99:
      return tr("E2E p99 (ms)");
    case kRequestRate:
      return tr("Req/s");
    case kThroughput:
      return tr("Output tok/s");
    case kPerGpu:
      return tr("Output tok/s per GPU");
    case kCost:
      return tr("$ per M tokens");
    case kColumnCount:
      break;
  }
  return {};
}

int CompareModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(entries_.size());
}

int CompareModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : kColumnCount;
}

QVariant CompareModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) {
    return {};
  }
  const auto column = static_cast<Column>(index.column());
  if (role == Qt::EditRole && column == kScenario) return entries_[index.row()].name;
  if (role == Qt::DisplayRole) {
    if (column == kScenario) return entries_[index.row()].name;
    const double v = value(index.row(), column);
    if (std::isnan(v)) return QStringLiteral("–");
    int decimals = 1;
    if (column == kGpus || column == kE2eP50 || column == kE2eP99) decimals = 0;
    if (column == kTpotP50 || column == kTpotP99 || column == kRequestRate) decimals = 2;
    if (column == kCost) decimals = 4;
    return QString::number(v, 'f', decimals);
  }
  if (role == Qt::TextAlignmentRole && column != kScenario) {
    return QVariant::fromValue(Qt::AlignRight | Qt::AlignVCenter);
  }
  return {};
}

Qt::ItemFlags CompareModel::flags(const QModelIndex& index) const {
  Qt::ItemFlags f = QAbstractTableModel::flags(index);
  if (index.isValid() && index.column() == kScenario) f |= Qt::ItemIsEditable;
  return f;
}

bool CompareModel::setData(const QModelIndex& index, const QVariant& value, int role) {
  if (role != Qt::EditRole || index.column() != kScenario ||
      !checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) {
    return false;
  }
  const QString name = value.toString().trimmed();
  if (name.isEmpty()) return false;  // a nameless entry could not be told apart in a legend
  entries_[index.row()].name = unique_name(name, index.row());
  emit dataChanged(index, index);
  emit entries_changed();
  return true;
}

QVariant CompareModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
  return column_name(static_cast<Column>(section));
}

}  // namespace servesim::gui
