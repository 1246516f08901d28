#include "gui/tradeoff_view.h"

#include <QCategoryAxis>
#include <QChartView>
#include <QComboBox>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLegend>
#include <QLegendMarker>
#include <QLineEdit>
#include <QLineSeries>
#include <QPen>
#include <QProgressBar>
#include <QPushButton>
#include <QScatterSeries>
#include <QTableView>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>
#include <limits>

#include "gui/chart_style.h"
#include "gui/error_style.h"
#include "gui/tradeoff_model.h"

namespace servesim::gui {
namespace {

const QColor kTtftColor(0x3b, 0x6e, 0xa8);
const QColor kTpotColor(0x2e, 0x9e, 0x6a);
const QColor kThroughputColor(0xe3, 0x8b, 0x2c);
const QColor kFrontierColor(0x8c, 0x6b, 0xb1);
const QColor kRateColor(0xc6, 0x28, 0x28);
// A latency axis turns logarithmic past this many decades between its smallest and largest
// point: on a linear one, 10 ms next to 10 s reads as zero.
constexpr double kLogAxisDecades = 2.0;

struct Range {
  double min = std::numeric_limits<double>::infinity();
  double max = -std::numeric_limits<double>::infinity();
  void add(double v) {
    min = std::min(min, v);
    max = std::max(max, v);
  }
  bool empty() const { return !(max >= min); }
};

// One metric against the knob; points of failed runs are left out.
QLineSeries* metric_series(const TradeoffModel& model, TradeoffModel::Column column,
                           const QColor& color, Range* y) {
  auto* series = new QLineSeries();
  series->setName(TradeoffModel::column_name(column));
  series->setPen(QPen(color, 2.0));
  series->setPointsVisible(true);
  QList<QPointF> points;
  for (int r = 0; r < model.rowCount(); ++r) {
    const double v = model.value(r, column);
    if (std::isnan(v)) continue;
    points.append(QPointF(model.x(r), v));
    y->add(v);
  }
  series->replace(points);
  return series;
}

}  // namespace

TradeoffView::TradeoffView(TradeoffModel* model, QWidget* parent)
    : QWidget(parent),
      model_(model),
      key_(new QComboBox(this)),
      values_(new QLineEdit(this)),
      run_(new QPushButton(tr("Run sweep"), this)),
      cancel_(new QPushButton(tr("Cancel"), this)),
      progress_(new QProgressBar(this)),
      message_(new QLabel(this)),
      latency_chart_(new QChartView(this)),
      throughput_chart_(new QChartView(this)),
      frontier_chart_(new QChartView(this)) {
  key_->setEditable(true);
  key_->addItems(suggested_keys());
  key_->setInsertPolicy(QComboBox::NoInsert);
  key_->setMinimumContentsLength(28);
  key_->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
  key_->setToolTip(tr("The scenario key to vary (any key; the list has the usual ones)"));
  key_->setObjectName(QStringLiteral("sweep_key"));
  values_->setPlaceholderText(tr("8,16,32 or START:STOP:STEP"));
  values_->setToolTip(tr("As servesim sweep --vary takes them: a list or an inclusive range"));
  values_->setObjectName(QStringLiteral("sweep_values"));
  run_->setObjectName(QStringLiteral("sweep_run"));
  cancel_->setObjectName(QStringLiteral("sweep_cancel"));
  progress_->setMaximumWidth(200);
  progress_->setFormat(tr("%v / %m points"));
  message_->setWordWrap(true);
  message_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  message_->setObjectName(QStringLiteral("sweep_message"));
  // Picking a listed key offers values that make sense for it; typing keeps what is typed.
  connect(key_, &QComboBox::activated, this,
          [this](int index) { values_->setText(suggested_values(key_->itemText(index))); });
  connect(values_, &QLineEdit::returnPressed, this, &TradeoffView::run_requested);
  connect(run_, &QPushButton::clicked, this, &TradeoffView::run_requested);
  connect(cancel_, &QPushButton::clicked, this, &TradeoffView::cancel_requested);

  auto* controls = new QHBoxLayout();
  auto* key_label = new QLabel(tr("&Knob"), this);
  key_label->setBuddy(key_);
  auto* values_label = new QLabel(tr("&Values"), this);
  values_label->setBuddy(values_);
  controls->addWidget(key_label);
  controls->addWidget(key_, 2);
  controls->addWidget(values_label);
  controls->addWidget(values_, 2);
  controls->addWidget(run_);
  controls->addWidget(progress_);
  controls->addWidget(cancel_);

  for (QChartView* view : {latency_chart_, throughput_chart_, frontier_chart_}) {
    view->setRenderHint(QPainter::Antialiasing);
    view->setMinimumSize(260, 200);
  }
  auto* table = new QTableView(this);
  table->setModel(model_);
  table->verticalHeader()->hide();
  table->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  table->horizontalHeader()->setStretchLastSection(true);
  table->setAlternatingRowColors(true);

  // Against the knob on top; the frontier and the figures below.
  auto* grid = new QGridLayout();
  grid->addWidget(latency_chart_, 0, 0);
  grid->addWidget(throughput_chart_, 0, 1);
  grid->addWidget(frontier_chart_, 1, 0);
  grid->addWidget(table, 1, 1);

  auto* layout = new QVBoxLayout(this);
  layout->addLayout(controls);
  layout->addWidget(message_);
  layout->addLayout(grid, 1);

  set_busy(false);
  show_message(tr("Pick a knob and its values, then Run sweep (Ctrl+Shift+R). Each point is "
                  "a full simulation of the scenario on the left."),
               false);
  connect(model_, &QAbstractItemModel::modelReset, this, &TradeoffView::redraw);
  redraw();
}

QStringList TradeoffView::suggested_keys() {
  return {QStringLiteral("engine.max_num_seqs"),
          QStringLiteral("workload.arrival.rate_qps"),
          QStringLiteral("engine.max_num_batched_tokens"),
          QStringLiteral("parallel.tensor_parallel_size"),
          QStringLiteral("parallel.data_parallel_size"),
          QStringLiteral("engine.gpu_memory_utilization"),
          QStringLiteral("gpu"),
          QStringLiteral("engine.kv_offloading_size_gib"),
          QStringLiteral("engine.speculative.num_speculative_tokens"),
          QStringLiteral("engine.speculative.acceptance_rate"),
          QStringLiteral("disaggregation.prefill.instances"),
          QStringLiteral("disaggregation.decode.data_parallel_size"),
          QStringLiteral("parallel.expert_zipf_exponent")};
}

QString TradeoffView::suggested_values(const QString& key) {
  if (key == QLatin1String("engine.max_num_seqs")) return QStringLiteral("8,16,32,64,128,256");
  if (key == QLatin1String("workload.arrival.rate_qps")) return QStringLiteral("1:9:2");
  if (key == QLatin1String("engine.max_num_batched_tokens")) {
    return QStringLiteral("1024,2048,4096,8192,16384");
  }
  if (key == QLatin1String("parallel.tensor_parallel_size")) return QStringLiteral("1,2,4,8");
  if (key == QLatin1String("parallel.data_parallel_size")) return QStringLiteral("1:4:1");
  if (key == QLatin1String("engine.gpu_memory_utilization")) return QStringLiteral("0.5:0.9:0.1");
  if (key == QLatin1String("gpu")) return QStringLiteral("A100-80GB,H100");
  if (key == QLatin1String("engine.kv_offloading_size_gib")) return QStringLiteral("16,64,256");
  if (key == QLatin1String("engine.speculative.num_speculative_tokens")) {
    return QStringLiteral("1,2,4,8");
  }
  if (key == QLatin1String("engine.speculative.acceptance_rate")) {
    return QStringLiteral("0.4:0.8:0.1");
  }
  if (key == QLatin1String("disaggregation.prefill.instances")) return QStringLiteral("1:4:1");
  if (key == QLatin1String("disaggregation.decode.data_parallel_size")) {
    return QStringLiteral("1,2,4,8");
  }
  if (key == QLatin1String("parallel.expert_zipf_exponent")) return QStringLiteral("0:1.5:0.5");
  return {};
}

QString TradeoffView::key() const {
  return key_->currentText().trimmed();
}

QString TradeoffView::values() const {
  return values_->text().trimmed();
}

void TradeoffView::set_knob(const QString& key, const QString& values) {
  key_->setEditText(key);
  values_->setText(values);
}

void TradeoffView::set_busy(bool busy) {
  progress_->setVisible(busy);
  cancel_->setVisible(busy);
  if (busy) {
    progress_->setRange(0, 0);
    progress_->setValue(0);
  }
}

void TradeoffView::set_progress(int done, int total) {
  progress_->setRange(0, total);
  progress_->setValue(done);
}

void TradeoffView::show_message(const QString& text, bool error) {
  message_->setText(text);
  message_->setStyleSheet(error ? error_text_style(/*bold=*/true) : QString());
}

QString TradeoffView::message() const {
  return message_->text();
}

void TradeoffView::redraw() {
  const QString key = model_->key().isEmpty() ? tr("knob") : model_->key();
  draw_against_knob(latency_chart_, tr("p99 latency vs %1").arg(key),
                    {TradeoffModel::kTtftP99, kTtftColor}, {TradeoffModel::kTpotP99, kTpotColor},
                    true);
  draw_against_knob(throughput_chart_, tr("Throughput vs %1").arg(key),
                    {TradeoffModel::kThroughput, kThroughputColor},
                    {TradeoffModel::kRequestRate, kRateColor}, false);
  draw_frontier();
}

QAbstractAxis* TradeoffView::add_knob_axis(QChart* chart) const {
  const QString key = model_->key().isEmpty() ? tr("knob") : model_->key();
  if (model_->numeric_values() || model_->rowCount() == 0) {
    Range x;
    for (int r = 0; r < model_->rowCount(); ++r) x.add(model_->x(r));
    if (x.empty()) x = Range{0.0, 1.0};
    QValueAxis* values = add_axis(chart, key, Qt::AlignBottom);
    fit_axis(values, x.min, x.max);
    return values;
  }
  // Names (GPUs, say): one labelled tick per point.
  auto* names = new QCategoryAxis(chart);
  names->setTitleText(key);
  names->setLabelsPosition(QCategoryAxis::AxisLabelsPositionOnValue);
  for (int r = 0; r < model_->rowCount(); ++r) {
    names->append(model_->data(model_->index(r, TradeoffModel::kValue)).toString(), r);
  }
  names->setRange(-0.5, model_->rowCount() - 0.5);
  chart->addAxis(names, Qt::AlignBottom);
  return names;
}

void TradeoffView::draw_against_knob(QChartView* view, const QString& title, const Metric& left,
                                     const Metric& right, bool log_when_decades) {
  QChart* chart = make_chart(title);
  QAbstractAxis* x = add_knob_axis(chart);
  // Each metric has its own axis: p99 TTFT and TPOT differ by orders of magnitude.
  for (const auto& [metric, alignment] :
       {std::pair{&left, Qt::AlignLeft}, std::pair{&right, Qt::AlignRight}}) {
    Range range;
    QLineSeries* series = metric_series(*model_, metric->column, metric->color, &range);
    chart->addSeries(series);
    series->attachAxis(x);
    const QString name = TradeoffModel::column_name(metric->column);
    QAbstractAxis* y = nullptr;
    if (log_when_decades && spans_decades(range.min, range.max, kLogAxisDecades)) {
      y = add_log_axis(chart, tr("%1, log scale").arg(name), alignment, range.min, range.max);
    } else {
      QValueAxis* linear =
          add_axis(chart, log_when_decades ? tr("%1, linear").arg(name) : name, alignment);
      fit_axis(linear, 0.0, range.empty() ? 1.0 : range.max);
      y = linear;
    }
    y->setLinePenColor(metric->color);
    series->attachAxis(y);
  }
  replace_chart(view, chart);
}

void TradeoffView::draw_frontier() {
  QChart* chart = make_chart(tr("Throughput vs interactivity"));
  QValueAxis* per_user = add_axis(chart, tr("tokens/s per user (1 / mean TPOT)"), Qt::AlignBottom);
  QValueAxis* per_gpu = add_axis(chart, tr("output tokens/s per GPU"), Qt::AlignLeft);
  auto* line = new QLineSeries();
  line->setName(tr("sweep points"));
  line->setPen(QPen(kFrontierColor, 2.0));
  line->setPointsVisible(true);
  // The ends of the sweep, so the direction the knob moves along the curve is visible.
  auto* first = new QScatterSeries();
  auto* last = new QScatterSeries();
  first->setColor(kTtftColor);
  last->setColor(kThroughputColor);
  for (QScatterSeries* s : {first, last}) {
    s->setMarkerSize(11.0);
    s->setBorderColor(s->color().darker(130));
  }
  Range x;
  Range y;
  QList<QPointF> points;
  int first_row = -1;
  int last_row = -1;
  for (int r = 0; r < model_->rowCount(); ++r) {
    const double u = model_->value(r, TradeoffModel::kPerUser);
    const double g = model_->value(r, TradeoffModel::kPerGpu);
    if (std::isnan(u) || std::isnan(g)) continue;
    points.append(QPointF(u, g));
    x.add(u);
    y.add(g);
    if (first_row < 0) first_row = r;
    last_row = r;
  }
  line->replace(points);
  auto value_text = [this](int row) {
    return model_->data(model_->index(row, TradeoffModel::kValue)).toString();
  };
  if (!points.isEmpty()) {
    // The key's last part keeps the legend short: "max_num_seqs = 4".
    const QString leaf = model_->key().section(QLatin1Char('.'), -1);
    first->setName(QStringLiteral("%1 = %2").arg(leaf, value_text(first_row)));
    first->append(points.front());
    last->setName(QStringLiteral("%1 = %2").arg(leaf, value_text(last_row)));
    last->append(points.back());
  }
  chart->addSeries(line);
  line->attachAxis(per_user);
  line->attachAxis(per_gpu);
  for (QScatterSeries* s : {first, last}) {
    chart->addSeries(s);
    s->attachAxis(per_user);
    s->attachAxis(per_gpu);
    // Without points the legend would show two nameless entries.
    if (points.isEmpty()) chart->legend()->markers(s).front()->setVisible(false);
  }
  fit_axis(per_user, 0.0, x.empty() ? 1.0 : x.max);
  fit_axis(per_gpu, 0.0, y.empty() ? 1.0 : y.max);
  replace_chart(frontier_chart_, chart);
}

}  // namespace servesim::gui
