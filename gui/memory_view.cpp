#include "gui/memory_view.h"

#include <QBarCategoryAxis>
#include <QBarSet>
#include <QChartView>
#include <QHeaderView>
#include <QHorizontalStackedBarSeries>
#include <QLabel>
#include <QTableView>
#include <QVBoxLayout>
#include <algorithm>
#include <array>

#include "gui/chart_style.h"
#include "gui/error_style.h"
#include "gui/memory_plan_model.h"

namespace servesim::gui {
namespace {

constexpr double kBytesPerGib = 1024.0 * 1024.0 * 1024.0;

struct Segment {
  MemoryPlanModel::Row row;
  QColor color;
};

const std::array<Segment, MemoryPlanModel::kRowCount> kSegments = {{
    {MemoryPlanModel::kWeights, QColor(0x3b, 0x6e, 0xa8)},
    {MemoryPlanModel::kActivations, QColor(0xe3, 0x8b, 0x2c)},
    {MemoryPlanModel::kNonTorch, QColor(0x8c, 0x6b, 0xb1)},
    {MemoryPlanModel::kCudaGraphs, QColor(0xb0, 0x7a, 0xa1)},
    {MemoryPlanModel::kKvCache, QColor(0x2e, 0x9e, 0x6a)},
    {MemoryPlanModel::kReserved, QColor(0xc8, 0xc8, 0xc8)},
}};

}  // namespace

MemoryView::MemoryView(MemoryPlanModel* model, QWidget* parent)
    : QWidget(parent),
      model_(model),
      chart_view_(new QChartView(this)),
      headline_(new QLabel(this)) {
  chart_view_->setRenderHint(QPainter::Antialiasing);
  chart_view_->setMinimumHeight(220);
  headline_->setWordWrap(true);
  headline_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  auto* table = new QTableView(this);
  table->setModel(model_);
  table->horizontalHeader()->setSectionResizeMode(0, QHeaderView::Stretch);
  table->verticalHeader()->hide();
  // Tall enough for every row: the table is short and fixed, the chart takes the rest.
  table->setFixedHeight(table->horizontalHeader()->sizeHint().height() +
                        MemoryPlanModel::kRowCount * table->verticalHeader()->defaultSectionSize() +
                        2 * table->frameWidth());

  auto* layout = new QVBoxLayout(this);
  layout->addWidget(chart_view_, 1);
  layout->addWidget(headline_);
  layout->addWidget(table);
  connect(model_, &MemoryPlanModel::plan_changed, this, &MemoryView::redraw);
  redraw();
}

QString MemoryView::headline() const {
  return headline_->text();
}

void MemoryView::redraw() {
  const std::optional<MemoryPlan>& plan = model_->plan();
  QChart* chart = make_chart(plan ? tr("Memory per GPU: %1 on %2, TP %3 × PP %4")
                                        .arg(QString::fromStdString(plan->model_name),
                                             QString::fromStdString(plan->gpu_name))
                                        .arg(plan->parallel.tp)
                                        .arg(plan->parallel.pp)
                                  : tr("Memory per GPU"));
  if (!plan) {
    headline_->setText(
        tr("No memory plan until the scenario validates (the error is under the form)."));
    replace_chart(chart_view_, chart);
    return;
  }
  // With pipeline parallelism each stage gets its own bar, the first stage on top.
  const int stages = model_->stage_count();
  auto* series = new QHorizontalStackedBarSeries();
  for (const Segment& s : kSegments) {
    auto* set = new QBarSet(MemoryPlanModel::row_name(s.row));
    // A negative KV cache is drawn as nothing; the headline says it does not fit.
    auto gib = [](int64_t bytes) {
      return std::max(0.0, static_cast<double>(bytes) / kBytesPerGib);
    };
    if (stages == 0) *set << gib(model_->bytes(s.row));
    for (int stage = stages - 1; stage >= 0; --stage)
      *set << gib(model_->stage_bytes(s.row, stage));
    set->setColor(s.color);
    set->setBorderColor(s.color.darker(120));
    series->append(set);
  }
  series->setBarWidth(0.6);
  chart->addSeries(series);
  auto* categories = new QBarCategoryAxis(chart);
  if (stages == 0) categories->append(tr("GPU (busiest of %1)").arg(plan->parallel.total_gpus()));
  for (int stage = stages - 1; stage >= 0; --stage) {
    categories->append(tr("PP stage %1: %2 layers").arg(stage).arg(plan->stages[stage].layers));
  }
  chart->addAxis(categories, Qt::AlignLeft);
  series->attachAxis(categories);
  QValueAxis* gib = add_axis(chart, tr("GiB"), Qt::AlignBottom);
  series->attachAxis(gib);
  fit_axis(gib, 0.0, static_cast<double>(plan->total_bytes) / kBytesPerGib);
  replace_chart(chart_view_, chart);

  const double kv_gib = static_cast<double>(plan->kv_cache_bytes) / kBytesPerGib;
  if (model_->problem().isEmpty()) {
    headline_->setText(tr("<b>KV cache:</b> %1 GiB = %2 tokens per replica. "
                          "<b>Maximum concurrency</b> for %3-token requests: %4×.")
                           .arg(kv_gib, 0, 'f', 2)
                           .arg(plan->kv_cache_tokens)
                           .arg(plan->engine.max_model_len)
                           .arg(plan->max_concurrency, 0, 'f', 2));
  } else {
    headline_->setText(
        error_html(tr("<b>Does not fit:</b> %1").arg(model_->problem().toHtmlEscaped())));
  }
}

}  // namespace servesim::gui
