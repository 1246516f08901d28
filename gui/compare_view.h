// CompareView: the Compare tab — the comparison set of a CompareModel as a table (one row
// per scenario) under two charts: the TTFT CDFs overlaid, one curve per scenario (on a log
// axis when the TTFTs are orders of magnitude apart), and output throughput (total and per
// GPU) as grouped bars. Buttons add the current result, open scenario files to run and
// compare, open a result folder (a run written with --out), and remove the selected rows
// (Delete).
//
// Adding and opening emit signals the CompareController acts on (it owns the runs); removing
// edits the model directly. Redraws when the model's rows change; computes nothing.
// Thread-safety: GUI thread only. Borrows the model (which must outlive the view).
#pragma once

#include <QString>
#include <QWidget>

class QChartView;
class QLabel;
class QPushButton;
class QTableView;

namespace servesim::gui {

class CompareModel;

class CompareView : public QWidget {
  Q_OBJECT

 public:
  explicit CompareView(CompareModel* model, QWidget* parent = nullptr);

  // Removes the selected rows; false when none is selected.
  bool remove_selected();
  void show_message(const QString& text, bool error);
  QString message() const;
  QTableView* table() const { return table_; }

 signals:
  void add_requested();
  void open_requested();
  void open_folder_requested();

 private:
  void redraw();
  void draw_cdfs();
  void draw_throughput();

  CompareModel* model_;
  QTableView* table_;
  QPushButton* remove_;
  QLabel* message_;
  QChartView* cdf_chart_;
  QChartView* throughput_chart_;
};

}  // namespace servesim::gui
