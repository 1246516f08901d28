// TimeBreakdownView: the "Where time goes" tab — the segments of the request path stacked
// into one horizontal bar per statistic (mean, p50, p95, p99), with a legend and, on hover,
// the segment's milliseconds and its share of the mean E2E; the model's table below it.
// Segments that took no time in the run are left out of the chart (not the table). Redraws
// when the model is reset; computes nothing itself.
// Thread-safety: GUI thread only. Borrows the model (which must outlive the view).
#pragma once

#include <QWidget>

class QChartView;
class QLabel;

namespace servesim::gui {

class TimeBreakdownModel;

class TimeBreakdownView : public QWidget {
  Q_OBJECT

 public:
  explicit TimeBreakdownView(TimeBreakdownModel* model, QWidget* parent = nullptr);

  QChartView* chart_view() const { return chart_; }
  // The hover text of a segment's block in the bar of a statistic (a model column).
  QString tooltip(int row, int column) const;

 private:
  void redraw();

  TimeBreakdownModel* model_;
  QChartView* chart_;
  QLabel* ttft_;
};

}  // namespace servesim::gui
