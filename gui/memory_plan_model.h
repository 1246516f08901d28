// MemoryPlanModel: one GPU's memory budget (a MemoryPlan from compute_unchecked, so a
// deployment that does not fit still shows by how much) as a table of components in GiB:
// weights, activation peak, non-torch overhead, CUDA graphs, KV cache, and the memory left
// outside gpu_memory_utilization. A negative KV cache means the rest does not fit.
//
// The model computes its plans itself from a deployment (compute()), so the Memory view can
// follow every edit without a simulation; set_plan() shows a plan computed elsewhere (a
// finished run's, say). Owns a copy of the GPU catalog, for naming GPUs that would fit.
//
// Columns: Component, GiB (the busiest GPU), and with pipeline parallelism one more per
// stage (stage_count() of them), since stages hold different layers and weights and so
// different room for KV cache. Rows are fixed (kRowCount) while a plan is set, none otherwise.
// Thread-safety: GUI thread only.
#pragma once

#include <QAbstractTableModel>
#include <QString>
#include <optional>
#include <vector>

#include "models/hardware_spec.h"
#include "models/memory_plan.h"
#include "sim/run/simulation.h"

namespace servesim::gui {

class MemoryPlanModel : public QAbstractTableModel {
  Q_OBJECT

 public:
  enum Row { kWeights, kActivations, kNonTorch, kCudaGraphs, kKvCache, kReserved, kRowCount };
  enum Column { kComponent, kGib, kColumnCount };

  // `gpus` (the catalog's) are the alternatives a not-fit problem() may suggest.
  explicit MemoryPlanModel(std::vector<HardwareSpec> gpus = {}, QObject* parent = nullptr);

  // The plan of `config`'s deployment, even one that does not fit (then problem() says why
  // and how to fix it); nullptr clears the table (the scenario does not validate).
  void compute(const SimulationConfig* config);
  // nullopt clears the table (the scenario does not name a usable model and GPU).
  // `problem` is MemoryPlan::compute's one-line error (with its fix) when the deployment
  // does not fit; empty when it does.
  void set_plan(std::optional<MemoryPlan> plan, QString problem = {});
  const std::optional<MemoryPlan>& plan() const { return plan_; }
  const QString& problem() const { return problem_; }

  static QString row_name(Row row);
  // Bytes of a component on the busiest GPU (kKvCache may be negative).
  int64_t bytes(Row row) const;
  // Pipeline stages shown apart: the plan's pp when above 1, else 0.
  int stage_count() const;
  // Bytes of a component on one stage's GPUs (kKvCache may be negative).
  int64_t stage_bytes(Row row, int stage) const;

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation,
                      int role = Qt::DisplayRole) const override;

 signals:
  void plan_changed();

 private:
  // The figure of a GiB or stage column.
  int64_t cell_bytes(Row row, int column) const;

  std::vector<HardwareSpec> gpus_;
  std::optional<MemoryPlan> plan_;
  QString problem_;
};

}  // namespace servesim::gui
