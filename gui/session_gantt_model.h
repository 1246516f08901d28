// SessionGanttModel: one agent session's calls as the rows of a Gantt chart — one row per
// span of its SessionRecord (LLM call, tool run, cache lookup), in order of start, each with
// its bar: where it starts after the session's start and how long each of its parts took,
// stacked left to right (an LLM call's service path before the engine, its engine queue,
// prefill, decode, its service path after; a tool; a lookup). The parts are the record's own
// split (the one the critical path sums), so the bars of the critical rows add up to the E2E.
//
// It holds the kept session records of a run (RunSnapshot::sessions, shared, never copied)
// and shows one of them: set_sessions() picks the ok session with the median E2E among them.
// Columns: Step, Kind, Start, End, then the parts' seconds, Critical, Status (seconds after
// the session's start). Reset whole on every change. Thread-safety: GUI thread only.
// Invariant: the row count is the shown session's span count (0 when none is shown).
#pragma once

#include <QAbstractTableModel>
#include <QString>
#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "sim/core/session_record.h"

namespace servesim::gui {

class SessionGanttModel : public QAbstractTableModel {
  Q_OBJECT

 public:
  enum Column {
    kStep,
    kKind,
    kStart,
    kEnd,
    kServiceBeforeColumn,
    kQueueColumn,
    kPrefillColumn,
    kDecodeColumn,
    kServiceAfterColumn,
    kToolColumn,
    kLookupColumn,
    kCritical,
    kStatus,
    kColumnCount
  };
  // A bar's parts in stacking order.
  enum Part {
    kServiceBefore,
    kQueue,
    kPrefill,
    kDecode,
    kServiceAfter,
    kTool,
    kLookup,
    kPartCount
  };
  struct Bar {
    double start_s = 0;                       // seconds after the session's start
    std::array<double, kPartCount> part_s{};  // seconds of each part, stacked from start_s
    double end_s() const;
  };
  using Sessions = std::shared_ptr<const std::vector<SessionRecord>>;

  explicit SessionGanttModel(QObject* parent = nullptr);

  // The kept records of a run (may be empty); shows the median-E2E session among them.
  void set_sessions(Sessions sessions);
  void clear();
  // Shows session `id`; false (nothing changes) when it is not among the kept records.
  bool select(uint64_t id);

  // The kept sessions, by ascending id.
  std::vector<const SessionRecord*> sessions_by_id() const;
  // The ok session whose E2E is the median of the kept ok ones (the lower middle for an even
  // count); the first kept session when none is ok; nullopt without sessions.
  std::optional<uint64_t> median_session() const;
  // The shown session; null when none is.
  const SessionRecord* session() const { return shown_; }
  const SessionSpan& span(int row) const;
  Bar bar(int row) const;
  // "3. search_0 (tool)": unique per row, so it can label a chart category.
  QString label(int row) const;
  static QString part_name(Part part);
  static QString kind_name(SpanKind kind);

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation,
                      int role = Qt::DisplayRole) const override;

 private:
  void show(const SessionRecord* record);

  Sessions sessions_;
  const SessionRecord* shown_ = nullptr;  // into *sessions_
  std::vector<int> order_;                // rows: span indices of the shown session by start
};

}  // namespace servesim::gui
