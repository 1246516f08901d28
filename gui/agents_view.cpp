#include "gui/agents_view.h"

#include <QBarCategoryAxis>
#include <QBarLegendMarker>
#include <QBarSet>
#include <QChartView>
#include <QCheckBox>
#include <QComboBox>
#include <QCursor>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QHorizontalStackedBarSeries>
#include <QLabel>
#include <QSignalBlocker>
#include <QSplitter>
#include <QTableView>
#include <QToolTip>
#include <QVBoxLayout>
#include <algorithm>
#include <array>
#include <cmath>

#include "gui/agent_breakdown_model.h"
#include "gui/chart_style.h"
#include "gui/run_snapshot.h"
#include "gui/session_gantt_model.h"

namespace servesim::gui {
namespace {

using Part = SessionGanttModel::Part;

// One colour per kind of time, shared by the Gantt bars and the breakdown's blocks.
const QColor kServiceColor(0x9e, 0x9e, 0x9e);
const QColor kQueueColor(0xfb, 0xc0, 0x2d);
const QColor kPrefillColor(0x3b, 0x6e, 0xa8);
const QColor kDecodeColor(0x2e, 0x9e, 0x6a);
const QColor kToolColor(0xd8, 0x1b, 0x60);
const QColor kCacheColor(0x8e, 0x24, 0xaa);

QColor part_color(Part part) {
  switch (part) {
    case SessionGanttModel::kQueue:
      return kQueueColor;
    case SessionGanttModel::kPrefill:
      return kPrefillColor;
    case SessionGanttModel::kDecode:
      return kDecodeColor;
    case SessionGanttModel::kTool:
      return kToolColor;
    case SessionGanttModel::kLookup:
      return kCacheColor;
    default:
      return kServiceColor;
  }
}

// The breakdown's kinds (AgentBreakdownModel::kPathRows order): legend names and colours.
struct PathKind {
  const char* name;
  QColor color;
};
const std::array<PathKind, 6> kPathKinds = {{{"LLM queue", kQueueColor},
                                             {"prefill", kPrefillColor},
                                             {"decode", kDecodeColor},
                                             {"service", kServiceColor},
                                             {"tools", kToolColor},
                                             {"cache", kCacheColor}}};

QBarSet* make_set(const QString& name, const QColor& color, bool critical) {
  auto* set = new QBarSet(name);
  QColor fill = color;
  if (!critical) fill.setAlpha(70);
  set->setColor(fill);
  set->setBorderColor(critical ? QColor(0x21, 0x21, 0x21) : fill);
  QPen pen = set->pen();
  pen.setWidthF(critical ? 1.5 : 0.5);
  pen.setColor(set->borderColor());
  set->setPen(pen);
  return set;
}

}  // namespace

AgentsView::AgentsView(SessionGanttModel* gantt, AgentBreakdownModel* breakdown, QWidget* parent)
    : QWidget(parent),
      gantt_(gantt),
      breakdown_(breakdown),
      note_(
          new QLabel(tr("Run an agent workload (workload.agent) to see its sessions here."), this)),
      content_(new QWidget(this)),
      picker_(new QComboBox(this)),
      kept_(new QLabel(this)),
      pin_(new QCheckBox(tr("Pin baseline"), this)),
      gantt_chart_(new QChartView(this)),
      breakdown_chart_(new QChartView(this)) {
  note_->setObjectName(QStringLiteral("agents_note"));
  note_->setWordWrap(true);
  picker_->setObjectName(QStringLiteral("agents_session_picker"));
  picker_->setMinimumContentsLength(18);
  pin_->setToolTip(tr("Keep the baseline while new runs replace the current one"));
  gantt_chart_->setRenderHint(QPainter::Antialiasing);
  gantt_chart_->setMinimumSize(320, 240);
  breakdown_chart_->setRenderHint(QPainter::Antialiasing);
  breakdown_chart_->setMinimumSize(320, 180);

  auto* picker_row = new QHBoxLayout();
  picker_row->addWidget(new QLabel(tr("Session"), this));
  picker_row->addWidget(picker_);
  picker_row->addWidget(kept_, 1);
  auto* top = new QWidget(this);
  auto* top_layout = new QVBoxLayout(top);
  top_layout->setContentsMargins(0, 0, 0, 0);
  top_layout->addLayout(picker_row);
  top_layout->addWidget(gantt_chart_, 1);

  auto* table = new QTableView(this);
  table->setModel(breakdown_);
  table->verticalHeader()->hide();
  table->horizontalHeader()->setSectionResizeMode(QHeaderView::Stretch);
  table->horizontalHeader()->setSectionResizeMode(0, QHeaderView::ResizeToContents);
  table->setAlternatingRowColors(true);
  auto* side = new QWidget(this);
  auto* side_layout = new QVBoxLayout(side);
  side_layout->setContentsMargins(0, 0, 0, 0);
  side_layout->addWidget(table, 1);
  side_layout->addWidget(pin_);
  auto* bottom = new QSplitter(Qt::Horizontal, this);
  bottom->addWidget(breakdown_chart_);
  bottom->addWidget(side);
  bottom->setStretchFactor(0, 3);
  bottom->setStretchFactor(1, 2);

  auto* split = new QSplitter(Qt::Vertical, this);
  split->addWidget(top);
  split->addWidget(bottom);
  split->setStretchFactor(0, 3);
  split->setStretchFactor(1, 2);
  auto* content_layout = new QVBoxLayout(content_);
  content_layout->setContentsMargins(0, 0, 0, 0);
  content_layout->addWidget(split);
  auto* layout = new QVBoxLayout(this);
  layout->addWidget(note_);
  layout->addWidget(content_, 1);
  content_->hide();

  connect(picker_, &QComboBox::currentIndexChanged, this, [this](int index) {
    if (index >= 0) gantt_->select(picker_->itemData(index).toULongLong());
  });
  connect(pin_, &QCheckBox::toggled, breakdown_, &AgentBreakdownModel::set_baseline_pinned);
  connect(gantt_, &QAbstractItemModel::modelReset, this, &AgentsView::redraw_gantt);
  connect(breakdown_, &QAbstractItemModel::modelReset, this, &AgentsView::redraw_breakdown);
  redraw_gantt();
  redraw_breakdown();
}

QString AgentsView::note() const {
  return note_->text();
}

void AgentsView::set_has_sessions(bool has_sessions) {
  has_sessions_ = has_sessions;
  note_->setVisible(!has_sessions);
  content_->setVisible(has_sessions);
  if (!has_sessions) {
    note_->setText(
        tr("The scenario has no agent sessions: this tab shows runs of an agent "
           "workload (workload.agent, docs/agents.md)."));
  }
  const QSignalBlocker block(picker_);
  picker_->clear();
  const std::vector<const SessionRecord*> sessions = gantt_->sessions_by_id();
  for (const SessionRecord* r : sessions) {
    const QString text = r->ok ? tr("#%1 — E2E %2 s").arg(r->id).arg(r->e2e_s(), 0, 'f', 2)
                               : tr("#%1 — failed").arg(r->id);
    picker_->addItem(text, QVariant::fromValue<qulonglong>(r->id));
  }
  if (const SessionRecord* shown = gantt_->session()) {
    picker_->setCurrentIndex(picker_->findData(QVariant::fromValue<qulonglong>(shown->id)));
  }
  const uint64_t all = breakdown_->current() ? breakdown_->current()->summary.sessions : 0;
  kept_->setText(tr("%1 of %2 sessions kept for the chart (the first %3 to end); "
                    "the breakdown below covers all of them")
                     .arg(sessions.size())
                     .arg(all)
                     .arg(RunSnapshot::kMaxSessionRecords));
}

QString AgentsView::tooltip(int row) const {
  const SessionSpan& s = gantt_->span(row);
  const SessionGanttModel::Bar bar = gantt_->bar(row);
  QString text = tr("%1\n%2 s to %3 s after the session's start")
                     .arg(gantt_->label(row))
                     .arg(bar.start_s, 0, 'f', 3)
                     .arg(bar.end_s(), 0, 'f', 3);
  for (int p = 0; p < SessionGanttModel::kPartCount; ++p) {
    if (bar.part_s[static_cast<size_t>(p)] <= 0) continue;
    text += tr("\n%1: %2 s")
                .arg(SessionGanttModel::part_name(static_cast<Part>(p)))
                .arg(bar.part_s[static_cast<size_t>(p)], 0, 'f', 3);
  }
  text += s.critical ? tr("\non the critical path") : tr("\noff the critical path");
  if (!s.ok) text += tr("; failed");
  if (s.kind == SpanKind::kLookup) text += s.hit ? tr("; hit") : tr("; miss");
  return text;
}

void AgentsView::redraw_gantt() {
  const SessionRecord* session = gantt_->session();
  QChart* chart = make_chart(
      !session ? tr("No session to show")
      : session->ok
          ? tr("Session #%1 (%2): E2E %3 s; the critical path outlined, the other calls faded")
                .arg(session->id)
                .arg(QString::fromStdString(session->workflow))
                .arg(session->e2e_s(), 0, 'f', 2)
          : tr("Session #%1 (%2): failed after %3 s")
                .arg(session->id)
                .arg(QString::fromStdString(session->workflow))
                .arg(session->e2e_s(), 0, 'f', 2));
  auto* series = new QHorizontalStackedBarSeries();
  series->setBarWidth(0.7);
  auto* offset = new QBarSet(QString());
  offset->setColor(Qt::transparent);
  offset->setBorderColor(Qt::transparent);
  std::array<QBarSet*, SessionGanttModel::kPartCount> on{};
  std::array<QBarSet*, SessionGanttModel::kPartCount> off{};
  for (int p = 0; p < SessionGanttModel::kPartCount; ++p) {
    const auto part = static_cast<Part>(p);
    const QString name = part == SessionGanttModel::kServiceBefore
                             ? tr("service path")
                             : SessionGanttModel::part_name(part);
    on[static_cast<size_t>(p)] = make_set(name, part_color(part), true);
    off[static_cast<size_t>(p)] = make_set(name, part_color(part), false);
  }
  // Category 0 is drawn at the bottom: the first call goes last, to the top.
  const int rows = gantt_->rowCount();
  auto* categories = new QBarCategoryAxis(chart);
  for (int i = 0; i < rows; ++i) {
    const int row = rows - 1 - i;
    const SessionGanttModel::Bar bar = gantt_->bar(row);
    const bool critical = gantt_->span(row).critical;
    offset->append(bar.start_s);
    for (size_t p = 0; p < bar.part_s.size(); ++p) {
      on[p]->append(critical ? bar.part_s[p] : 0.0);
      off[p]->append(critical ? 0.0 : bar.part_s[p]);
    }
    categories->append(gantt_->label(row));
  }
  series->append(offset);
  for (size_t p = 0; p < on.size(); ++p) {
    for (QBarSet* set : {on[p], off[p]}) {
      connect(set, &QBarSet::hovered, this, [this, rows](bool over, int index) {
        if (over) QToolTip::showText(QCursor::pos(), tooltip(rows - 1 - index));
      });
      series->append(set);
    }
  }
  chart->addSeries(series);
  for (QLegendMarker* marker : chart->legend()->markers(series)) {
    const QBarSet* set = static_cast<QBarLegendMarker*>(marker)->barset();
    const bool shown = std::find(on.begin(), on.end(), set) != on.end() &&
                       set != on[SessionGanttModel::kServiceAfter];
    marker->setVisible(shown);
  }
  chart->addAxis(categories, Qt::AlignLeft);
  series->attachAxis(categories);
  QValueAxis* x = add_axis(chart, tr("seconds after the session's start"), Qt::AlignBottom);
  series->attachAxis(x);
  fit_axis(x, 0.0, session ? session->e2e_s() : 1.0);
  replace_chart(gantt_chart_, chart);
}

void AgentsView::redraw_breakdown() {
  const std::vector<const AgentBreakdownModel::Run*> runs = breakdown_->runs();
  QChart* chart = make_chart(tr("Critical path per session: mean seconds by kind (all sessions)"));
  auto* series = new QHorizontalStackedBarSeries();
  auto* categories = new QBarCategoryAxis(chart);
  // The current run on top, its baseline below.
  for (auto it = runs.rbegin(); it != runs.rend(); ++it) {
    categories->append(((*it == runs.front()) ? tr("current: ") : tr("baseline: ")) + (*it)->name);
  }
  double longest_s = 0;
  std::vector<double> totals_s(runs.size(), 0.0);
  for (size_t k = 0; k < kPathKinds.size(); ++k) {
    auto* set = make_set(tr(kPathKinds[k].name), kPathKinds[k].color, true);
    set->setBorderColor(kPathKinds[k].color);
    for (size_t i = 0; i < runs.size(); ++i) {
      const auto* run = runs[runs.size() - 1 - i];
      const double v = AgentBreakdownModel::value(AgentBreakdownModel::kPathRows[k], run->summary);
      set->append(std::isnan(v) ? 0.0 : v);
      totals_s[i] += std::isnan(v) ? 0.0 : v;
    }
    series->append(set);
  }
  for (double t : totals_s) longest_s = std::max(longest_s, t);
  chart->addSeries(series);
  chart->addAxis(categories, Qt::AlignLeft);
  series->attachAxis(categories);
  QValueAxis* x = add_axis(chart, tr("seconds per session (sum: the mean E2E)"), Qt::AlignBottom);
  series->attachAxis(x);
  fit_axis(x, 0.0, longest_s);
  replace_chart(breakdown_chart_, chart);
}

}  // namespace servesim::gui
