#include "gui/memory_plan_model.h"

#include <QBrush>
#include <QColor>

namespace servesim::gui {

namespace {
constexpr double kBytesPerGib = 1024.0 * 1024.0 * 1024.0;
}

MemoryPlanModel::MemoryPlanModel(QObject* parent) : QAbstractTableModel(parent) {}

void MemoryPlanModel::set_plan(std::optional<MemoryPlan> plan, QString problem) {
  beginResetModel();
  plan_ = std::move(plan);
  problem_ = std::move(problem);
  endResetModel();
  emit plan_changed();
}

QString MemoryPlanModel::row_name(Row row) {
  switch (row) {
    case kWeights:
      return tr("Weights");
    case kActivations:
      return tr("Activation peak");
    case kNonTorch:
      return tr("Non-torch overhead");
    case kCudaGraphs:
      return tr("CUDA graphs");
    case kKvCache:
      return tr("KV cache");
    case kReserved:
      return tr("Outside gpu_memory_utilization");
    case kRowCount:
      break;
  }
  return {};
}

int64_t MemoryPlanModel::bytes(Row row) const {
  if (!plan_) return 0;
  switch (row) {
    case kWeights:
      return plan_->weights_bytes;
    case kActivations:
      return plan_->activation_bytes;
    case kNonTorch:
      return plan_->non_torch_bytes;
    case kCudaGraphs:
      return plan_->cuda_graph_bytes;
    case kKvCache:
      return plan_->kv_cache_bytes;
    case kReserved:
      return plan_->total_bytes - plan_->requested_bytes;
    case kRowCount:
      break;
  }
  return 0;
}

int MemoryPlanModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() || !plan_ ? 0 : kRowCount;
}

int MemoryPlanModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : kColumnCount;
}

QVariant MemoryPlanModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) {
    return {};
  }
  const auto row = static_cast<Row>(index.row());
  if (role == Qt::DisplayRole) {
    if (index.column() == kComponent) return row_name(row);
    return QString::number(static_cast<double>(bytes(row)) / kBytesPerGib, 'f', 2);
  }
  if (role == Qt::TextAlignmentRole && index.column() == kGib) {
    return QVariant::fromValue(Qt::AlignRight | Qt::AlignVCenter);
  }
  if (role == Qt::ForegroundRole && row == kKvCache && bytes(row) <= 0) {
    return QBrush(QColor(0xc6, 0x28, 0x28));
  }
  return {};
}

QVariant MemoryPlanModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
  return section == kComponent ? tr("Component (per GPU)") : tr("GiB");
}

}  // namespace servesim::gui
