// LatencyView: the Latency tab — the CDFs of TTFT, TPOT and E2E (one chart each, since
// their scales differ by orders of magnitude) with p50, p90 and p99 marked, drawn from a
// LatencyCdfModel. Redraws when the model is reset.
// Thread-safety: GUI thread only. Borrows the model (which must outlive the view).
#pragma once

#include <QWidget>
#include <array>

class QChartView;

namespace servesim::gui {

class LatencyCdfModel;

class LatencyView : public QWidget {
  Q_OBJECT

 public:
  explicit LatencyView(LatencyCdfModel* model, QWidget* parent = nullptr);

 private:
  void redraw();

  LatencyCdfModel* model_;
  std::array<QChartView*, 3> charts_{};
};

}  // namespace servesim::gui
