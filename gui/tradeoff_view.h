// TradeoffView: the Trade-offs tab — sweep one knob and see what it trades. Above: the knob
// (a list of the keys people sweep, or any scenario key typed in), its values as
// `servesim sweep --vary` takes them (a list "8,16,32" or a range "16:128:16"), Run sweep,
// progress and Cancel, and a one-line message (an error in red). Below, in a 2 x 2 grid: p99
// TTFT and p99 TPOT against the knob (an axis whose values span more than two decades is
// logarithmic, and its title says so); output tokens/s and requests/s against the knob; output
// tokens/s per GPU against tokens/s per user across the points (the throughput-interactivity
// frontier); and the TradeoffModel table.
//
// The view starts nothing itself: Run sweep and Cancel emit signals the TradeoffController
// acts on, and the controller tells the view what is going on (set_busy, set_progress,
// show_message). It redraws when its model is reset and computes nothing.
// Thread-safety: GUI thread only. Borrows the model (which must outlive the view).
#pragma once

#include <QColor>
#include <QString>
#include <QWidget>

#include "gui/tradeoff_model.h"

class QAbstractAxis;
class QChart;
class QChartView;
class QComboBox;
class QLabel;
class QLineEdit;
class QProgressBar;
class QPushButton;

namespace servesim::gui {

class TradeoffView : public QWidget {
  Q_OBJECT

 public:
  explicit TradeoffView(TradeoffModel* model, QWidget* parent = nullptr);

  // The keys offered in the knob list, in order.
  static QStringList suggested_keys();
  // Values to start from for a suggested key ("" for others).
  static QString suggested_values(const QString& key);

  QString key() const;
  QString values() const;
  void set_knob(const QString& key, const QString& values);
  void set_busy(bool busy);
  void set_progress(int done, int total);
  void show_message(const QString& text, bool error);
  QString message() const;
  QPushButton* run_button() const { return run_; }
  QPushButton* cancel_button() const { return cancel_; }
  // The p99 TTFT / TPOT chart (for tests: its axes' scale).
  QChartView* latency_chart() const { return latency_chart_; }

 signals:
  void run_requested();
  void cancel_requested();

 private:
  struct Metric {
    TradeoffModel::Column column;
    QColor color;
  };

  void redraw();
  // The knob as the x axis: its values, or one tick per name when they are not numbers.
  QAbstractAxis* add_knob_axis(QChart* chart) const;
  // Two metrics against the knob, `left` on the left axis and `right` on the right one; with
  // `log_when_decades`, an axis whose values span more than two decades is logarithmic, and
  // each axis title says which scale it has.
  void draw_against_knob(QChartView* view, const QString& title, const Metric& left,
                         const Metric& right, bool log_when_decades);
  void draw_frontier();

  TradeoffModel* model_;
  QComboBox* key_;
  QLineEdit* values_;
  QPushButton* run_;
  QPushButton* cancel_;
  QProgressBar* progress_;
  QLabel* message_;
  QChartView* latency_chart_;
  QChartView* throughput_chart_;
  QChartView* frontier_chart_;
};

}  // namespace servesim::gui
