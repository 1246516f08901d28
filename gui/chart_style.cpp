#include "gui/chart_style.h"

#include <QFont>
#include <QMargins>
#include <cmath>

namespace servesim::gui {

QChart* make_chart(const QString& title) {
  auto* chart = new QChart();
  chart->setTitle(title);
  QFont font = chart->titleFont();
  font.setBold(true);
  chart->setTitleFont(font);
  chart->setMargins(QMargins(4, 4, 4, 4));
  chart->legend()->setAlignment(Qt::AlignBottom);
  chart->setAnimationOptions(QChart::NoAnimation);
  return chart;
}

QValueAxis* add_axis(QChart* chart, const QString& title, Qt::Alignment alignment) {
  auto* axis = new QValueAxis(chart);
  axis->setTitleText(title);
  axis->setLabelFormat(QStringLiteral("%g"));
  chart->addAxis(axis, alignment);
  return axis;
}

void replace_chart(QChartView* view, QChart* chart) {
  QChart* old = view->chart();
  view->setChart(chart);
  delete old;
}

void fit_axis(QValueAxis* axis, double min, double max) {
  if (!std::isfinite(min) || !std::isfinite(max)) {
    min = 0.0;
    max = 1.0;
  }
  if (max - min <= 0.0) {
    // A flat series (say, no preemptions) sits on the lower edge when it is at zero.
    const double pad = std::max(std::abs(max) * 0.1, 1.0);
    if (min != 0.0) min -= pad;
    max += pad;
  }
  axis->setRange(min, max);
  axis->applyNiceNumbers();
}

bool spans_decades(double min, double max, double decades) {
  return min > 0.0 && std::isfinite(max) && std::log10(max / min) > decades;
}

QLogValueAxis* add_log_axis(QChart* chart, const QString& title, Qt::Alignment alignment,
                            double min, double max) {
  auto* axis = new QLogValueAxis(chart);
  axis->setTitleText(title);
  axis->setBase(10.0);
  axis->setLabelFormat(QStringLiteral("%g"));
  axis->setMinorTickCount(-1);  // Qt's "as many as the base has": 2 … 9 between decades
  chart->addAxis(axis, alignment);
  axis->setRange(std::pow(10.0, std::floor(std::log10(min))),
                 std::pow(10.0, std::ceil(std::log10(max))));
  return axis;
}

}  // namespace servesim::gui
