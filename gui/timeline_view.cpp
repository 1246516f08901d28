#include "gui/timeline_view.h"

#include <QChartView>
#include <QGridLayout>
#include <QLineSeries>
#include <QPen>
#include <algorithm>
#include <initializer_list>
#include <limits>

#include "gui/chart_style.h"
#include "gui/timeline_model.h"

namespace servesim::gui {
namespace {

struct Curve {
  TimelineModel::Column column;
  QString name;
  QColor color;
};

}  // namespace

TimelineView::TimelineView(TimelineModel* model, QWidget* parent) : QWidget(parent), model_(model) {
  auto* grid = new QGridLayout(this);
  for (size_t i = 0; i < charts_.size(); ++i) {
    charts_[i] = new QChartView(this);
    charts_[i]->setRenderHint(QPainter::Antialiasing);
    charts_[i]->setMinimumSize(240, 180);
    grid->addWidget(charts_[i], static_cast<int>(i / 2), static_cast<int>(i % 2));
  }
  connect(model_, &QAbstractItemModel::modelReset, this, &TimelineView::redraw);
  redraw();
}

void TimelineView::redraw() {
  auto draw = [this](QChartView* view, const QString& title, const QString& y_title,
                     std::initializer_list<Curve> curves) {
    QChart* chart = make_chart(title);
    QValueAxis* x = add_axis(chart, tr("simulated time (s)"), Qt::AlignBottom);
    QValueAxis* y = add_axis(chart, y_title, Qt::AlignLeft);
    double t_max = 0.0;
    double y_max = 0.0;
    const int rows = model_->rowCount();
    for (const Curve& curve : curves) {
      auto* series = new QLineSeries();
      series->setName(curve.name);
      series->setPen(QPen(curve.color, 1.5));
      QList<QPointF> points;
      points.reserve(rows);
      for (int r = 0; r < rows; ++r) {
        const double t = model_->value(r, TimelineModel::kTime);
        const double v = model_->value(r, curve.column);
        points.append(QPointF(t, v));
        t_max = std::max(t_max, t);
        y_max = std::max(y_max, v);
      }
      series->replace(points);
      chart->addSeries(series);
      series->attachAxis(x);
      series->attachAxis(y);
    }
    chart->legend()->setVisible(curves.size() > 1);
    fit_axis(x, 0.0, t_max);
    fit_axis(y, 0.0, y_max);
    replace_chart(view, chart);
  };
  draw(charts_[0], tr("Sequences"), tr("sequences"),
       {{TimelineModel::kRunning, tr("running"), QColor(0x3b, 0x6e, 0xa8)},
        {TimelineModel::kWaiting, tr("waiting"), QColor(0xe3, 0x8b, 0x2c)}});
  draw(charts_[1], tr("KV-cache usage"), tr("% of blocks"),
       {{TimelineModel::kKvUsage, tr("KV usage"), QColor(0x2e, 0x9e, 0x6a)}});
  draw(charts_[2], tr("Tokens per step"), tr("tokens"),
       {{TimelineModel::kTokens, tr("tokens"), QColor(0x8c, 0x6b, 0xb1)}});
  draw(charts_[3], tr("Preemptions (cumulative)"), tr("preemptions"),
       {{TimelineModel::kPreemptions, tr("preemptions"), QColor(0xc6, 0x28, 0x28)}});
}

}  // namespace servesim::gui
