// MemoryView: the Memory tab — a stacked bar of one GPU's memory (weights, activations,
// non-torch overhead, CUDA graphs, KV cache, what gpu_memory_utilization leaves out), the
// KV-cache size in tokens and the maximum concurrency at max_model_len, above the
// MemoryPlanModel table. With pipeline parallelism there is one bar per stage (stages hold
// different layers, so different weights and room for KV cache). Redraws whenever the model's plan
// changes; it computes nothing. Thread-safety: GUI thread only. Borrows the model (which must
// outlive the view).
#pragma once

#include <QWidget>

class QChartView;
class QLabel;

namespace servesim::gui {

class MemoryPlanModel;

class MemoryView : public QWidget {
  Q_OBJECT

 public:
  explicit MemoryView(MemoryPlanModel* model, QWidget* parent = nullptr);

  // The headline under the chart ("KV cache: N tokens ..."), for tests.
  QString headline() const;

 private:
  void redraw();

  MemoryPlanModel* model_;
  QChartView* chart_view_;
  QLabel* headline_;
};

}  // namespace servesim::gui
