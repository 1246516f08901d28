#include "gui/session_gantt_model.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace servesim::gui {
namespace {

// An unnamed step is named by its path; the workflow's own prefix says nothing on its chart.
QString short_step(const std::string& step) {
  const QString s = QString::fromStdString(step);
  static const QString kPrefix = QStringLiteral("workload.agent.workflows[");
  if (!s.startsWith(kPrefix)) return s;
  const qsizetype cut = s.indexOf(QStringLiteral("]."));
  return cut < 0 ? s : s.mid(cut + 2);
}

QString seconds(double s) {
  return std::isnan(s) ? QStringLiteral("–") : QString::number(s, 'f', 3);
}

}  // namespace

double SessionGanttModel::Bar::end_s() const {
  return start_s + std::accumulate(part_s.begin(), part_s.end(), 0.0);
}

SessionGanttModel::SessionGanttModel(QObject* parent) : QAbstractTableModel(parent) {}

void SessionGanttModel::set_sessions(Sessions sessions) {
  sessions_ = std::move(sessions);
  const std::optional<uint64_t> median = median_session();
  const SessionRecord* shown = nullptr;
  if (median) {
    for (const SessionRecord& r : *sessions_) {
      if (r.id == *median) shown = &r;
    }
  }
  show(shown);
}

void SessionGanttModel::clear() {
  set_sessions(nullptr);
}

bool SessionGanttModel::select(uint64_t id) {
  if (!sessions_) return false;
  for (const SessionRecord& r : *sessions_) {
    if (r.id == id) {
      show(&r);
      return true;
    }
  }
  return false;
}

void SessionGanttModel::show(const SessionRecord* record) {
  beginResetModel();
  shown_ = record;
  order_.clear();
  if (shown_) {
    order_.resize(shown_->spans.size());
    std::iota(order_.begin(), order_.end(), 0);
    std::stable_sort(order_.begin(), order_.end(), [this](int a, int b) {
      return shown_->spans[static_cast<size_t>(a)].start_s <
             shown_->spans[static_cast<size_t>(b)].start_s;
    });
  }
  endResetModel();
}

std::vector<const SessionRecord*> SessionGanttModel::sessions_by_id() const {
  std::vector<const SessionRecord*> out;
  if (!sessions_) return out;
  for (const SessionRecord& r : *sessions_) out.push_back(&r);
  std::sort(out.begin(), out.end(),
            [](const SessionRecord* a, const SessionRecord* b) { return a->id < b->id; });
  return out;
}

std::optional<uint64_t> SessionGanttModel::median_session() const {
  if (!sessions_ || sessions_->empty()) return std::nullopt;
  std::vector<const SessionRecord*> ok;
  for (const SessionRecord& r : *sessions_) {
    if (r.ok) ok.push_back(&r);
  }
  if (ok.empty()) return sessions_->front().id;
  const auto middle = ok.begin() + static_cast<std::ptrdiff_t>((ok.size() - 1) / 2);
  std::nth_element(ok.begin(), middle, ok.end(),
                   [](const SessionRecord* a, const SessionRecord* b) {
                     return a->e2e_s() < b->e2e_s() || (a->e2e_s() == b->e2e_s() && a->id < b->id);
                   });
  return (*middle)->id;
}

const SessionSpan& SessionGanttModel::span(int row) const {
  return shown_->spans.at(static_cast<size_t>(order_.at(static_cast<size_t>(row))));
}

SessionGanttModel::Bar SessionGanttModel::bar(int row) const {
  const SessionSpan& s = span(row);
  Bar bar;
  bar.start_s = s.start_s - shown_->start_s;
  // A call still in flight when the session failed ran at least until the failure.
  const double end_s = std::isnan(s.end_s) ? shown_->finish_s : s.end_s;
  const double total_s = std::max(0.0, end_s - s.start_s);
  switch (s.kind) {
    case SpanKind::kTool:
      bar.part_s[kTool] = total_s;
      return bar;
    case SpanKind::kLookup:
      bar.part_s[kLookup] = total_s;
      return bar;
    case SpanKind::kLlm:
      break;
  }
  if (std::isnan(s.scheduled_s)) {  // never reached the engine's batch
    bar.part_s[kServiceBefore] = total_s;
    return bar;
  }
  bar.part_s[kQueue] = s.queue_s;
  bar.part_s[kPrefill] = s.prefill_s;
  bar.part_s[kDecode] = s.decode_s;
  const double service_s = std::max(0.0, total_s - s.queue_s - s.prefill_s - s.decode_s);
  const double engine_arrival_s = s.scheduled_s - s.queue_s;
  bar.part_s[kServiceBefore] = std::clamp(engine_arrival_s - s.start_s, 0.0, service_s);
  bar.part_s[kServiceAfter] = service_s - bar.part_s[kServiceBefore];
  return bar;
}

QString SessionGanttModel::label(int row) const {
  return QStringLiteral("%1. %2 (%3)")
      .arg(row + 1)
      .arg(short_step(span(row).step), kind_name(span(row).kind));
}

QString SessionGanttModel::part_name(Part part) {
  switch (part) {
    case kServiceBefore:
      return tr("service (to the engine)");
    case kQueue:
      return tr("LLM queue");
    case kPrefill:
      return tr("prefill");
    case kDecode:
      return tr("decode");
    case kServiceAfter:
      return tr("service (back)");
    case kTool:
      return tr("tool");
    case kLookup:
      return tr("cache lookup");
    case kPartCount:
      break;
  }
  return {};
}

QString SessionGanttModel::kind_name(SpanKind kind) {
  switch (kind) {
    case SpanKind::kLlm:
      return QStringLiteral("llm");
    case SpanKind::kTool:
      return QStringLiteral("tool");
    case SpanKind::kLookup:
      return QStringLiteral("lookup");
  }
  return {};
}

int SessionGanttModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(order_.size());
}

int SessionGanttModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : kColumnCount;
}

QVariant SessionGanttModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) {
    return {};
  }
  const auto column = static_cast<Column>(index.column());
  if (role == Qt::TextAlignmentRole && column >= kStart && column < kCritical) {
    return QVariant(Qt::AlignRight | Qt::AlignVCenter);
  }
  if (role != Qt::DisplayRole && role != Qt::EditRole) return {};
  const SessionSpan& s = span(index.row());
  const Bar b = bar(index.row());
  switch (column) {
    case kStep:
      return short_step(s.step);
    case kKind:
      return kind_name(s.kind);
    case kStart:
      return seconds(b.start_s);
    case kEnd:
      return seconds(s.end_s - shown_->start_s);
    case kCritical:
      return s.critical ? tr("yes") : QString();
    case kStatus:
      if (std::isnan(s.end_s)) return tr("in flight");
      if (s.kind == SpanKind::kLookup) return s.hit ? tr("hit") : tr("miss");
      return s.ok ? tr("ok") : tr("failed");
    case kColumnCount:
      return {};
    default:
      return seconds(b.part_s[static_cast<size_t>(column - kServiceBeforeColumn)]);
  }
}

QVariant SessionGanttModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole) {
    return QAbstractTableModel::headerData(section, orientation, role);
  }
  switch (static_cast<Column>(section)) {
    case kStep:
      return tr("Step");
    case kKind:
      return tr("Kind");
    case kStart:
      return tr("Start (s)");
    case kEnd:
      return tr("End (s)");
    case kCritical:
      return tr("Critical");
    case kStatus:
      return tr("Status");
    case kColumnCount:
      return {};
    default:
      return part_name(static_cast<Part>(section - kServiceBeforeColumn)) + tr(" (s)");
  }
}

}  // namespace servesim::gui
