// TimelineView: the Timeline tab — four charts over simulated time drawn from a
// TimelineModel: running and waiting sequences, KV-cache usage, tokens per step, and
// preemptions so far. Redraws when the model is reset.
// Thread-safety: GUI thread only. Borrows the model (which must outlive the view).
#pragma once

#include <QWidget>
#include <array>

class QChartView;

namespace servesim::gui {

class TimelineModel;

class TimelineView : public QWidget {
  Q_OBJECT

 public:
  explicit TimelineView(TimelineModel* model, QWidget* parent = nullptr);

 private:
  void redraw();

  TimelineModel* model_;
  std::array<QChartView*, 4> charts_{};
};

}  // namespace servesim::gui
