#include "gui/latency_view.h"

#include <QChartView>
#include <QHBoxLayout>
#include <QLineSeries>
#include <QPen>
#include <QScatterSeries>
#include <algorithm>
#include <cmath>
#include <limits>

#include "gui/chart_style.h"
#include "gui/latency_cdf_model.h"

namespace servesim::gui {

LatencyView::LatencyView(LatencyCdfModel* model, QWidget* parent) : QWidget(parent), model_(model) {
  auto* row = new QHBoxLayout(this);
  for (QChartView*& view : charts_) {
    view = new QChartView(this);
    view->setRenderHint(QPainter::Antialiasing);
    view->setMinimumSize(220, 200);
    row->addWidget(view);
  }
  connect(model_, &QAbstractItemModel::modelReset, this, &LatencyView::redraw);
  redraw();
}

void LatencyView::redraw() {
  const LatencyCdfModel::Column columns[] = {LatencyCdfModel::kTtft, LatencyCdfModel::kTpot,
                                             LatencyCdfModel::kE2e};
  const QColor colors[] = {QColor(0x3b, 0x6e, 0xa8), QColor(0x2e, 0x9e, 0x6a),
                           QColor(0xe3, 0x8b, 0x2c)};
  for (size_t i = 0; i < charts_.size(); ++i) {
    const LatencyCdfModel::Column column = columns[i];
    const QString name = LatencyCdfModel::metric_name(column);
    QChart* chart = make_chart(tr("%1 CDF").arg(name));
    QValueAxis* x = add_axis(chart, tr("%1 (ms)").arg(name), Qt::AlignBottom);
    QValueAxis* y = add_axis(chart, tr("% of requests"), Qt::AlignLeft);

    auto* curve = new QLineSeries();
    curve->setName(name);
    curve->setPen(QPen(colors[i], 2.0));
    QList<QPointF> points;
    double x_min = std::numeric_limits<double>::infinity();
    double x_max = 0.0;
    for (int r = 0; r < model_->rowCount(); ++r) {
      const double ms = model_->value_ms(r, column);
      if (std::isnan(ms)) continue;
      points.append(QPointF(ms, model_->value_ms(r, LatencyCdfModel::kPercentile)));
      x_min = std::min(x_min, ms);
      x_max = std::max(x_max, ms);
    }
    curve->replace(points);
    chart->addSeries(curve);
    curve->attachAxis(x);
    curve->attachAxis(y);

    auto* marks = new QScatterSeries();
    marks->setName(tr("p50 / p90 / p99"));
    marks->setMarkerSize(9.0);
    marks->setColor(QColor(0xc6, 0x28, 0x28));
    marks->setBorderColor(QColor(0xc6, 0x28, 0x28));
    if (!points.isEmpty()) {
      for (const LatencyCdfModel::Mark& m : model_->marks(column)) {
        if (std::isnan(m.value_ms)) continue;
        // Rounded to 0.1 ms so the point labels stay short.
        marks->append(std::round(m.value_ms * 10.0) / 10.0, m.percentile);
      }
    }
    marks->setPointLabelsFormat(QStringLiteral("@xPoint ms"));
    marks->setPointLabelsVisible(true);
    marks->setPointLabelsClipping(false);
    chart->addSeries(marks);
    marks->attachAxis(x);
    marks->attachAxis(y);

    if (points.isEmpty()) x_min = 0.0;
    fit_axis(x, std::max(0.0, x_min), x_max);
    y->setRange(0.0, 100.0);
    y->setTickCount(6);
    replace_chart(charts_[i], chart);
  }
}

}  // namespace servesim::gui
