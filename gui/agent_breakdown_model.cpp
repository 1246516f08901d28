#include "gui/agent_breakdown_model.h"

#include <cmath>

namespace servesim::gui {

AgentBreakdownModel::AgentBreakdownModel(QObject* parent) : QAbstractTableModel(parent) {}

void AgentBreakdownModel::add_run(const QString& name, const SessionSummary& summary) {
  beginResetModel();
  if (!pinned_ || !baseline_) baseline_ = std::move(current_);
  current_ = Run{name, summary};
  endResetModel();
}

void AgentBreakdownModel::set_baseline_pinned(bool pinned) {
  pinned_ = pinned;
}

std::vector<const AgentBreakdownModel::Run*> AgentBreakdownModel::runs() const {
  std::vector<const Run*> out;
  if (current_) out.push_back(&*current_);
  if (baseline_) out.push_back(&*baseline_);
  return out;
}

double AgentBreakdownModel::value(Row row, const SessionSummary& s) {
  const bool any = s.completed > 0;
  const double none = std::nan("");
  switch (row) {
    case kLlmQueue:
      return any ? s.path.llm_queue_s : none;
    case kPrefill:
      return any ? s.path.prefill_s : none;
    case kDecode:
      return any ? s.path.decode_s : none;
    case kService:
      return any ? s.path.service_s : none;
    case kTools:
      return any ? s.path.tool_s : none;
    case kCache:
      return any ? s.path.cache_s : none;
    case kPathTotal:
      return any ? s.path.total_s() : none;
    case kE2eP50:
      return s.e2e.p50_s;
    case kE2eP95:
      return s.e2e.p95_s;
    case kE2eP99:
      return s.e2e.p99_s;
    case kFirstTokenP50:
      return s.ttft.p50_s;
    case kCompleted:
      return static_cast<double>(s.completed);
    case kFailed:
      return static_cast<double>(s.failed);
    case kRowCount:
      break;
  }
  return none;
}

QString AgentBreakdownModel::row_name(Row row) {
  switch (row) {
    case kLlmQueue:
      return tr("LLM queue (s)");
    case kPrefill:
      return tr("prefill (s)");
    case kDecode:
      return tr("decode (s)");
    case kService:
      return tr("service (s)");
    case kTools:
      return tr("tools (s)");
    case kCache:
      return tr("cache lookups (s)");
    case kPathTotal:
      return tr("path total = mean E2E (s)");
    case kE2eP50:
      return tr("E2E p50 (s)");
    case kE2eP95:
      return tr("E2E p95 (s)");
    case kE2eP99:
      return tr("E2E p99 (s)");
    case kFirstTokenP50:
      return tr("first token p50 (s)");
    case kCompleted:
      return tr("sessions completed");
    case kFailed:
      return tr("sessions failed");
    case kRowCount:
      break;
  }
  return {};
}

int AgentBreakdownModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() || !current_ ? 0 : kRowCount;
}

int AgentBreakdownModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : 1 + static_cast<int>(runs().size());
}

QVariant AgentBreakdownModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) {
    return {};
  }
  if (role == Qt::TextAlignmentRole && index.column() > 0) {
    return QVariant(Qt::AlignRight | Qt::AlignVCenter);
  }
  if (role != Qt::DisplayRole && role != Qt::EditRole) return {};
  const auto row = static_cast<Row>(index.row());
  if (index.column() == 0) return row_name(row);
  const double v = value(row, runs().at(static_cast<size_t>(index.column() - 1))->summary);
  if (std::isnan(v)) return QStringLiteral("–");
  if (row == kCompleted || row == kFailed) return QString::number(static_cast<qulonglong>(v));
  return QString::number(v, 'f', 3);
}

QVariant AgentBreakdownModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole) {
    return QAbstractTableModel::headerData(section, orientation, role);
  }
  if (section == 0) return tr("Per session (path: mean)");
  const std::vector<const Run*> r = runs();
  if (section < 1 || section > static_cast<int>(r.size())) return {};
  return (section == 1 ? tr("current: ") : tr("baseline: ")) +
         r[static_cast<size_t>(section - 1)]->name;
}

}  // namespace servesim::gui
