#include "gui/memory_plan_model.h"

#include <QBrush>
#include <QColor>
#include <utility>

#include "gui/error_style.h"
#include "models/config_error.h"

namespace servesim::gui {

namespace {
constexpr double kBytesPerGib = 1024.0 * 1024.0 * 1024.0;
}

MemoryPlanModel::MemoryPlanModel(std::vector<HardwareSpec> gpus, QObject* parent)
    : QAbstractTableModel(parent), gpus_(std::move(gpus)) {}

void MemoryPlanModel::compute(const SimulationConfig* config) {
  if (!config) {
    set_plan(std::nullopt);
    return;
  }
  const SimulationConfig& c = *config;
  MemoryPlan plan = MemoryPlan::compute_unchecked(c.model, c.gpu, c.parallel, c.engine);
  QString problem;
  try {
    // The checked version explains a deployment that does not fit, with the fix.
    MemoryPlan::compute(c.model, c.gpu, c.parallel, c.engine, &gpus_);
  } catch (const ConfigError& e) {
    problem = QString::fromStdString(e.what());
  }
  set_plan(std::move(plan), std::move(problem));
}

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
      return plan_->cuda_graph_subtracted_bytes();
    case kKvCache:
      return plan_->kv_cache_bytes;
    case kReserved:
      return plan_->total_bytes - plan_->requested_bytes;
    case kRowCount:
      break;
  }
  return 0;
}

int64_t MemoryPlanModel::cell_bytes(Row row, int column) const {
  return column >= kColumnCount ? stage_bytes(row, column - kColumnCount) : bytes(row);
}

int MemoryPlanModel::stage_count() const {
  return plan_ && plan_->stages.size() > 1 ? static_cast<int>(plan_->stages.size()) : 0;
}

int64_t MemoryPlanModel::stage_bytes(Row row, int stage) const {
  if (stage < 0 || stage >= stage_count()) return 0;
  const MemoryPlan::Stage& s = plan_->stages[stage];
  if (row == kWeights) return s.weights_bytes;
  if (row == kKvCache) return s.kv_cache_bytes;
  return bytes(row);  // the same on every stage
}

int MemoryPlanModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() || !plan_ ? 0 : kRowCount;
}

int MemoryPlanModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : kColumnCount + stage_count();
}

QVariant MemoryPlanModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) {
    return {};
  }
  const auto row = static_cast<Row>(index.row());
  if (role == Qt::DisplayRole) {
    if (index.column() == kComponent) return row_name(row);
    return QString::number(static_cast<double>(cell_bytes(row, index.column())) / kBytesPerGib, 'f',
                           2);
  }
  if (role == Qt::TextAlignmentRole && index.column() != kComponent) {
    return QVariant::fromValue(Qt::AlignRight | Qt::AlignVCenter);
  }
  if (role == Qt::ForegroundRole && row == kKvCache && cell_bytes(row, index.column()) <= 0) {
    return error_brush();
  }
  return {};
}

QVariant MemoryPlanModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
  if (section == kComponent) return tr("Component (per GPU)");
  if (section == kGib) return stage_count() > 0 ? tr("GiB (busiest)") : tr("GiB");
  const int stage = section - kColumnCount;
  if (stage < 0 || stage >= stage_count()) return {};
  return tr("Stage %1 GiB").arg(stage);  // the chart names its layers
}

}  // namespace servesim::gui
