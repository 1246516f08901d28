// CompareModel: the comparison set — finished runs of two or more scenarios side by side, one
// row each, in the order added: name, GPUs, TTFT/TPOT/E2E p50 and p99 (ms), request rate,
// output tokens/s (total and per GPU) and cost per million tokens where the run has a price.
// Each entry also keeps its latency CDF, so the Compare view can overlay the distributions.
// Entries come from a finished run in the GUI or from a result folder (RunFolder: any run
// written with --out, simulated or measured); a figure the folder lacks shows as "–".
//
// Rows are inserted and removed one at a time (views keep their selection); entries are
// plain values copied from RunSnapshots. The Scenario column is editable, to rename an entry
// (names stay unique). Thread-safety: GUI thread only.
#pragma once

#include <QAbstractTableModel>
#include <QString>
#include <vector>

#include "gui/run_snapshot.h"
#include "sim/metrics/metrics.h"
#include "sim/metrics/run_folder.h"

namespace servesim::gui {

class CompareModel : public QAbstractTableModel {
  Q_OBJECT

 public:
  enum Column {
    kScenario,
    kGpus,
    kTtftP50,
    kTtftP99,
    kTpotP50,
    kTpotP99,
    kE2eP50,
    kE2eP99,
    kRequestRate,
    kThroughput,
    kPerGpu,
    kCost,
    kColumnCount
  };

  struct Entry {
    QString name;  // shown in the table and the legends
    MetricsSummary summary;
    int num_gpus = 0;           // all replicas; 0 when unknown (a folder without the sizes)
    std::vector<CdfPoint> cdf;  // as the run recorded it; may be empty
  };

  explicit CompareModel(QObject* parent = nullptr);

  // The entry of a finished run, named `name` (made unique with " (2)", " (3)" ... so the
  // legends tell entries apart).
  static Entry entry_of(const RunSnapshot& snapshot, const QString& name);
  // The entry of a result folder: its summary, its GPUs (tensor x pipeline x data parallel
  // sizes where summary.json has them) and the CDF of its requests.csv.
  static Entry entry_of(const RunFolder& run, const QString& name);
  void add(Entry entry);
  // Removes row `row`; out-of-range rows are ignored.
  void remove(int row);
  const std::vector<Entry>& entries() const { return entries_; }
  // A metric column's figure at a row in the unit its header names; NaN where the run has
  // none (no price: no cost).
  double value(int row, Column column) const;
  static QString column_name(Column column);

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  Qt::ItemFlags flags(const QModelIndex& index) const override;
  bool setData(const QModelIndex& index, const QVariant& value, int role = Qt::EditRole) override;
  QVariant headerData(int section, Qt::Orientation orientation,
                      int role = Qt::DisplayRole) const override;

 signals:
  // Rows were added, removed or renamed.
  void entries_changed();

 private:
  // `name`, or `name (2)`, `name (3)` ... if another row than `except_row` has it.
  QString unique_name(const QString& name, int except_row = -1) const;

  std::vector<Entry> entries_;
};

}  // namespace servesim::gui
