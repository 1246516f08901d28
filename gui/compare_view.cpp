#include "gui/compare_view.h"

#include <QAction>
#include <QBarCategoryAxis>
#include <QBarSeries>
#include <QBarSet>
#include <QChartView>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLabel>
#include <QLineSeries>
#include <QLogValueAxis>
#include <QPen>
#include <QPushButton>
#include <QSplitter>
#include <QTableView>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <vector>

#include "gui/chart_style.h"
#include "gui/compare_model.h"
#include "gui/error_style.h"

namespace servesim::gui {
namespace {

// Distinct colours for up to eight scenarios; further ones reuse them.
const QColor kPalette[] = {QColor(0x3b, 0x6e, 0xa8), QColor(0xe3, 0x8b, 0x2c),
                           QColor(0x2e, 0x9e, 0x6a), QColor(0xc6, 0x28, 0x28),
                           QColor(0x8c, 0x6b, 0xb1), QColor(0x8a, 0x6d, 0x3b),
                           QColor(0xd6, 0x6b, 0xb0), QColor(0x55, 0x55, 0x55)};

// Above this ratio of the largest to the smallest TTFT the CDF axis is logarithmic.
constexpr double kLogAxisSpread = 30.0;

QColor series_color(size_t i) {
  return kPalette[i % (sizeof kPalette / sizeof kPalette[0])];
}

}  // namespace

CompareView::CompareView(CompareModel* model, QWidget* parent)
    : QWidget(parent),
      model_(model),
      table_(new QTableView(this)),
      remove_(new QPushButton(tr("&Remove"), this)),
      message_(new QLabel(this)),
      cdf_chart_(new QChartView(this)),
      throughput_chart_(new QChartView(this)) {
  auto* add = new QPushButton(tr("&Add current result"), this);
  add->setToolTip(tr("Add the result on display to the comparison (Ctrl+Shift+A)"));
  add->setObjectName(QStringLiteral("compare_add"));
  auto* open = new QPushButton(tr("&Open scenarios…"), this);
  open->setToolTip(tr("Run scenario files and add their results (Ctrl+Shift+O)"));
  open->setObjectName(QStringLiteral("compare_open"));
  auto* open_folder = new QPushButton(tr("Open run &folder…"), this);
  open_folder->setToolTip(
      tr("Add a result folder written with --out: simulate, engine run or loadtest"));
  open_folder->setObjectName(QStringLiteral("compare_open_folder"));
  remove_->setToolTip(tr("Remove the selected rows (Delete)"));
  remove_->setObjectName(QStringLiteral("compare_remove"));
  connect(add, &QPushButton::clicked, this, &CompareView::add_requested);
  connect(open, &QPushButton::clicked, this, &CompareView::open_requested);
  connect(open_folder, &QPushButton::clicked, this, &CompareView::open_folder_requested);
  connect(remove_, &QPushButton::clicked, this, &CompareView::remove_selected);
  message_->setWordWrap(true);
  message_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  message_->setObjectName(QStringLiteral("compare_message"));

  auto* buttons = new QHBoxLayout();
  buttons->addWidget(add);
  buttons->addWidget(open);
  buttons->addWidget(open_folder);
  buttons->addWidget(remove_);
  buttons->addWidget(message_, 1);

  table_->setModel(model_);
  table_->verticalHeader()->hide();
  table_->setSelectionBehavior(QAbstractItemView::SelectRows);
  table_->setAlternatingRowColors(true);
  table_->horizontalHeader()->setSectionResizeMode(CompareModel::kScenario,
                                                   QHeaderView::ResizeToContents);
  // Delete removes the selection while the table has the focus.
  auto* remove_key = new QAction(table_);
  remove_key->setShortcut(QKeySequence::Delete);
  remove_key->setShortcutContext(Qt::WidgetShortcut);
  connect(remove_key, &QAction::triggered, this, &CompareView::remove_selected);
  table_->addAction(remove_key);

  for (QChartView* view : {cdf_chart_, throughput_chart_}) {
    view->setRenderHint(QPainter::Antialiasing);
    view->setMinimumSize(260, 220);
  }
  auto* charts = new QWidget(this);
  auto* charts_layout = new QHBoxLayout(charts);
  charts_layout->setContentsMargins(0, 0, 0, 0);
  charts_layout->addWidget(cdf_chart_);
  charts_layout->addWidget(throughput_chart_);

  auto* splitter = new QSplitter(Qt::Vertical, this);
  splitter->addWidget(charts);
  splitter->addWidget(table_);
  splitter->setStretchFactor(0, 3);
  splitter->setStretchFactor(1, 1);

  auto* layout = new QVBoxLayout(this);
  layout->addLayout(buttons);
  layout->addWidget(splitter, 1);

  show_message(tr("Add the current result, or open scenario files, to compare them."), false);
  connect(model_, &CompareModel::entries_changed, this, &CompareView::redraw);
  redraw();
}

bool CompareView::remove_selected() {
  QList<int> rows;
  for (const QModelIndex& index : table_->selectionModel()->selectedRows()) rows << index.row();
  if (rows.isEmpty()) return false;
  // From the bottom up, so the rows still to remove keep their numbers.
  std::sort(rows.begin(), rows.end(), std::greater<int>());
  for (int row : rows) model_->remove(row);
  return true;
}

void CompareView::show_message(const QString& text, bool error) {
  message_->setText(text);
  message_->setStyleSheet(error ? error_text_style(/*bold=*/true) : QString());
}

QString CompareView::message() const {
  return message_->text();
}

void CompareView::redraw() {
  remove_->setEnabled(model_->rowCount() > 0);
  draw_cdfs();
  draw_throughput();
}

void CompareView::draw_cdfs() {
  QChart* chart = make_chart(tr("TTFT CDF per scenario"));
  QValueAxis* y = add_axis(chart, tr("% of requests"), Qt::AlignLeft);
  double x_min = std::numeric_limits<double>::infinity();
  double x_max = 0.0;
  const std::vector<CompareModel::Entry>& entries = model_->entries();
  std::vector<QLineSeries*> curves;
  for (size_t i = 0; i < entries.size(); ++i) {
    auto* curve = new QLineSeries();
    curve->setName(entries[i].name);
    curve->setPen(QPen(series_color(i), 2.0));
    QList<QPointF> points;
    for (const CdfPoint& p : entries[i].cdf) {
      if (!(p.ttft_s > 0)) continue;  // NaN, or a zero a log axis cannot place
      points.append(QPointF(p.ttft_s * 1e3, p.quantile * 100.0));
      x_min = std::min(x_min, p.ttft_s * 1e3);
      x_max = std::max(x_max, p.ttft_s * 1e3);
    }
    curve->replace(points);
    chart->addSeries(curve);
    curves.push_back(curve);
  }
  // Scenarios compared are often an overloaded one beside a healthy one, TTFTs orders of
  // magnitude apart: then a log axis keeps both curves readable.
  QAbstractAxis* x = nullptr;
  if (x_max > 0 && x_max / x_min > kLogAxisSpread) {
    auto* log = new QLogValueAxis(chart);
    log->setTitleText(tr("TTFT (ms, log scale)"));
    log->setLabelFormat(QStringLiteral("%g"));
    log->setMinorTickCount(8);
    chart->addAxis(log, Qt::AlignBottom);
    log->setRange(std::pow(10.0, std::floor(std::log10(x_min))),
                  std::pow(10.0, std::ceil(std::log10(x_max))));
    x = log;
  } else {
    QValueAxis* linear = add_axis(chart, tr("TTFT (ms)"), Qt::AlignBottom);
    fit_axis(linear, 0.0, x_max);
    x = linear;
  }
  for (QLineSeries* curve : curves) {
    curve->attachAxis(x);
    curve->attachAxis(y);
  }
  y->setRange(0.0, 100.0);
  y->setTickCount(6);
  replace_chart(cdf_chart_, chart);
}

void CompareView::draw_throughput() {
  QChart* chart = make_chart(tr("Output throughput per scenario"));
  auto* total = new QBarSet(tr("output tokens/s"));
  auto* per_gpu = new QBarSet(tr("output tokens/s per GPU"));
  total->setColor(QColor(0xe3, 0x8b, 0x2c));
  per_gpu->setColor(QColor(0x3b, 0x6e, 0xa8));
  auto* names = new QBarCategoryAxis(chart);
  double y_max = 0.0;
  for (int r = 0; r < model_->rowCount(); ++r) {
    const double t = model_->value(r, CompareModel::kThroughput);
    const double g = model_->value(r, CompareModel::kPerGpu);
    *total << (std::isnan(t) ? 0.0 : t);
    *per_gpu << (std::isnan(g) ? 0.0 : g);
    y_max = std::max({y_max, std::isnan(t) ? 0.0 : t, std::isnan(g) ? 0.0 : g});
    names->append(model_->entries()[r].name);
  }
  auto* series = new QBarSeries();
  series->append(total);
  series->append(per_gpu);
  chart->addSeries(series);
  chart->addAxis(names, Qt::AlignBottom);
  series->attachAxis(names);
  QValueAxis* y = add_axis(chart, tr("tokens/s"), Qt::AlignLeft);
  series->attachAxis(y);
  fit_axis(y, 0.0, y_max);
  replace_chart(throughput_chart_, chart);
}

}  // namespace servesim::gui
