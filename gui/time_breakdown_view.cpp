#include "gui/time_breakdown_view.h"

#include <QBarCategoryAxis>
#include <QBarSet>
#include <QChartView>
#include <QCursor>
#include <QHeaderView>
#include <QHorizontalStackedBarSeries>
#include <QLabel>
#include <QTableView>
#include <QToolTip>
#include <QVBoxLayout>
#include <algorithm>
#include <array>
#include <iterator>

#include "gui/chart_style.h"
#include "gui/time_breakdown_model.h"

namespace servesim::gui {
namespace {

constexpr TimeBreakdownModel::Column kStatistics[] = {
    TimeBreakdownModel::kMean, TimeBreakdownModel::kP50, TimeBreakdownModel::kP95,
    TimeBreakdownModel::kP99};

// One colour per segment, in kRows order, so a segment keeps its colour between runs.
QColor segment_color(int row) {
  static const QColor colors[] = {
      QColor(0x9e, 0x9e, 0x9e), QColor(0x5c, 0x6b, 0xc0), QColor(0x8e, 0x24, 0xaa),
      QColor(0xd8, 0x1b, 0x60), QColor(0xf4, 0x51, 0x1e), QColor(0xfb, 0xc0, 0x2d),
      QColor(0x3b, 0x6e, 0xa8), QColor(0x2e, 0x9e, 0x6a), QColor(0x00, 0x97, 0xa7)};
  return colors[row % static_cast<int>(std::size(colors))];
}

}  // namespace

TimeBreakdownView::TimeBreakdownView(TimeBreakdownModel* model, QWidget* parent)
    : QWidget(parent), model_(model), chart_(new QChartView(this)), ttft_(new QLabel(this)) {
  chart_->setRenderHint(QPainter::Antialiasing);
  chart_->setMinimumSize(320, 240);
  auto* table = new QTableView(this);
  table->setModel(model_);
  table->verticalHeader()->hide();
  table->horizontalHeader()->setSectionResizeMode(QHeaderView::Stretch);
  table->setAlternatingRowColors(true);
  ttft_->setObjectName(QStringLiteral("time_breakdown_ttft"));
  auto* layout = new QVBoxLayout(this);
  layout->addWidget(chart_, 3);
  layout->addWidget(ttft_);
  layout->addWidget(table, 2);
  connect(model_, &QAbstractItemModel::modelReset, this, &TimeBreakdownView::redraw);
  redraw();
}

QString TimeBreakdownView::tooltip(int row, int column) const {
  const auto statistic = static_cast<TimeBreakdownModel::Column>(column);
  return tr("%1: %2 ms at %3; %4% of the mean E2E")
      .arg(QString::fromLatin1(to_string(model_->segment(row))))
      .arg(model_->value_ms(row, statistic), 0, 'f', 2)
      .arg(TimeBreakdownModel::column_name(statistic))
      .arg(model_->share_of_e2e(row) * 100.0, 0, 'f', 1);
}

void TimeBreakdownView::redraw() {
  QChart* chart = make_chart(model_->has_data() ? tr("Where time goes")
                                                : tr("Where time goes: no completed requests"));
  auto* series = new QHorizontalStackedBarSeries();
  double longest_ms = 0.0;
  std::array<double, std::size(kStatistics)> totals_ms{};
  for (int row = 0; row < model_->rowCount(); ++row) {
    if (model_->value_ms(row, TimeBreakdownModel::kMean) <= 0.0 &&
        model_->value_ms(row, TimeBreakdownModel::kP99) <= 0.0) {
      continue;
    }
    auto* set = new QBarSet(QString::fromLatin1(to_string(model_->segment(row))));
    set->setColor(segment_color(row));
    set->setBorderColor(segment_color(row));
    for (size_t i = 0; i < std::size(kStatistics); ++i) {
      const double ms = model_->value_ms(row, kStatistics[i]);
      set->append(ms);
      totals_ms[i] += ms;
    }
    connect(set, &QBarSet::hovered, this, [this, row](bool over, int index) {
      if (over) QToolTip::showText(QCursor::pos(), tooltip(row, kStatistics[index]));
    });
    series->append(set);
  }
  for (double t : totals_ms) longest_ms = std::max(longest_ms, t);
  chart->addSeries(series);
  auto* categories = new QBarCategoryAxis(chart);
  for (TimeBreakdownModel::Column c : kStatistics) {
    categories->append(TimeBreakdownModel::column_name(c));
  }
  chart->addAxis(categories, Qt::AlignLeft);
  series->attachAxis(categories);
  QValueAxis* x =
      add_axis(chart, tr("ms (each segment's own statistic, stacked)"), Qt::AlignBottom);
  series->attachAxis(x);
  fit_axis(x, 0.0, longest_ms);
  replace_chart(chart_, chart);

  const TimeBreakdown& b = model_->breakdown();
  ttft_->setText(model_->has_data() ? tr("Mean TTFT: %1 ms at the client, %2 ms at the server")
                                          .arg(b.mean_client_ttft_s * 1e3, 0, 'f', 1)
                                          .arg(b.mean_server_ttft_s * 1e3, 0, 'f', 1)
                                    : QString());
}

}  // namespace servesim::gui
