#include "gui/summary_model.h"

#include <QBrush>
#include <QColor>
#include <cmath>

#include "gui/error_style.h"

namespace servesim::gui {
namespace {

QString number(double v, int decimals, const QString& unit = {}) {
  if (std::isnan(v)) return QStringLiteral("–");
  QString s = QString::number(v, 'f', decimals);
  return unit.isEmpty() ? s : s + QLatin1Char(' ') + unit;
}

QString count(uint64_t v) {
  return QString::number(v);
}

}  // namespace

SummaryModel::SummaryModel(QObject* parent) : QAbstractTableModel(parent) {}

void SummaryModel::clear() {
  beginResetModel();
  rows_.clear();
  endResetModel();
}

void SummaryModel::set_summary(const MetricsSummary& m, const SloSpec& slo) {
  std::vector<Row> rows;
  rows.push_back({tr("Requests completed"), count(m.completed), {}, Verdict::kNone});
  rows.push_back({tr("Requests rejected"), count(m.rejected), {}, Verdict::kNone});
  rows.push_back({tr("Requests timed out"), count(m.timed_out), {}, Verdict::kNone});
  if (m.excluded_warmup > 0) {
    rows.push_back({tr("Left out (warm-up)"), count(m.excluded_warmup), {}, Verdict::kNone});
  }
  rows.push_back(
      {tr("Duration"), number(m.duration_s, 1, QStringLiteral("s")), {}, Verdict::kNone});
  rows.push_back(
      {tr("Request throughput"), number(m.request_throughput, 2, QStringLiteral("req/s")), {}, {}});
  rows.push_back(
      {tr("Input throughput"), number(m.input_throughput, 1, QStringLiteral("tok/s")), {}, {}});
  rows.push_back(
      {tr("Output throughput"), number(m.output_throughput, 1, QStringLiteral("tok/s")), {}, {}});
  rows.push_back({tr("Output throughput per GPU"),
                  number(m.output_throughput_per_gpu, 1, QStringLiteral("tok/s")),
                  {},
                  {}});
  rows.push_back({tr("Total token throughput"),
                  number(m.total_token_throughput, 1, QStringLiteral("tok/s")),
                  {},
                  {}});

  auto latency = [&rows](const QString& name, const LatencyStats& s,
                         std::optional<double> limit_s) {
    const QString ms = QStringLiteral("ms");
    rows.push_back({name + tr(" mean"), number(s.mean_s * 1e3, 1, ms), {}, Verdict::kNone});
    rows.push_back({name + tr(" p50"), number(s.p50_s * 1e3, 1, ms), {}, Verdict::kNone});
    rows.push_back({name + tr(" p90"), number(s.p90_s * 1e3, 1, ms), {}, Verdict::kNone});
    Row p99{name + tr(" p99"), number(s.p99_s * 1e3, 1, ms), {}, Verdict::kNone};
    if (limit_s) {
      p99.slo = QStringLiteral("≤ ") + number(*limit_s * 1e3, 1, ms);
      if (!std::isnan(s.p99_s)) p99.verdict = s.p99_s <= *limit_s ? Verdict::kPass : Verdict::kFail;
    }
    rows.push_back(p99);
    rows.push_back({name + tr(" max"), number(s.max_s * 1e3, 1, ms), {}, Verdict::kNone});
  };
  latency(QStringLiteral("TTFT"), m.ttft, slo.ttft_s);
  latency(QStringLiteral("TPOT"), m.tpot, slo.tpot_s);
  latency(QStringLiteral("ITL"), m.itl, std::nullopt);
  latency(QStringLiteral("E2E"), m.e2e, slo.e2e_s);
  latency(tr("Queueing"), m.queueing, std::nullopt);

  rows.push_back({tr("Goodput"), number(m.goodput, 2, QStringLiteral("req/s")), {}, {}});
  rows.push_back({tr("SLO attainment"),
                  number(m.slo_attainment * 100, 1, QStringLiteral("%")),
                  {},
                  Verdict::kNone});
  rows.push_back({tr("Prefix cache hit rate"),
                  number(m.prefix_cache_hit_rate * 100, 1, QStringLiteral("%")),
                  {},
                  {}});
  rows.push_back({tr("Preemptions"), count(m.preemptions), {}, Verdict::kNone});
  rows.push_back({tr("Error rate"), number(m.error_rate * 100, 2, QStringLiteral("%")), {}, {}});
  rows.push_back({tr("Cost per 1M output tokens"),
                  std::isnan(m.cost_per_million_output_tokens)
                      ? number(m.cost_per_million_output_tokens, 3)
                      : QStringLiteral("$") + number(m.cost_per_million_output_tokens, 3),
                  {},
                  {}});

  beginResetModel();
  rows_ = std::move(rows);
  endResetModel();
}

int SummaryModel::row_of(const QString& metric) const {
  for (size_t i = 0; i < rows_.size(); ++i) {
    if (rows_[i].metric == metric) return static_cast<int>(i);
  }
  return -1;
}

int SummaryModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(rows_.size());
}

int SummaryModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : kColumnCount;
}

QVariant SummaryModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) {
    return {};
  }
  const Row& row = rows_[static_cast<size_t>(index.row())];
  if (role == Qt::DisplayRole) {
    switch (index.column()) {
      case kMetric:
        return row.metric;
      case kValue:
        return row.value;
      case kSlo:
        return row.slo;
      case kResult:
        if (row.verdict == Verdict::kPass) return tr("pass");
        if (row.verdict == Verdict::kFail) return tr("FAIL");
        return QString();
    }
  }
  if (role == Qt::TextAlignmentRole && index.column() == kValue) {
    return QVariant::fromValue(Qt::AlignRight | Qt::AlignVCenter);
  }
  if (role == Qt::ForegroundRole && index.column() == kResult && row.verdict != Verdict::kNone) {
    return row.verdict == Verdict::kPass ? QBrush(QColor(0x1b, 0x7f, 0x3b)) : error_brush();
  }
  return {};
}

QVariant SummaryModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
  switch (section) {
    case kMetric:
      return tr("Metric");
    case kValue:
      return tr("Value");
    case kSlo:
      return tr("SLO");
    case kResult:
      return tr("p99 meets SLO");
  }
  return {};
}

}  // namespace servesim::gui
