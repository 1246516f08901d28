// The service layer's views: the "Where time goes" chart and table carry the run's own
// breakdown, the diagnosis beside the Summary names the planted bottleneck of the
// gateway-saturated scenario with its evidence, and the Trade-offs latency axis turns
// logarithmic exactly when its values span more than two decades.
#include <QBarSet>
#include <QChartView>
#include <QHorizontalStackedBarSeries>
#include <QListWidget>
#include <QLogValueAxis>
#include <QSignalSpy>
#include <QTest>
#include <QValueAxis>

#include "gui/diagnosis_view.h"
#include "gui/main_window.h"
#include "gui/scenario_document.h"
#include "gui/simulation_runner.h"
#include "gui/time_breakdown_model.h"
#include "gui/time_breakdown_view.h"
#include "gui/tradeoff_model.h"
#include "gui/tradeoff_view.h"
#include "gui_test_registry.h"

namespace servesim::gui {
namespace {

// A sweep of three points with these p99 TTFTs and a p99 TPOT of 10-20 ms.
SweepReport sweep_with_ttft(std::initializer_list<double> ttft_p99_s) {
  SweepReport report;
  report.axes = {{"engine.max_num_seqs", {}}};
  int value = 8;
  for (double ttft : ttft_p99_s) {
    SweepPoint p;
    p.values = {std::to_string(value)};
    p.num_gpus = 1;
    p.result.summary.ttft.p99_s = ttft;
    p.result.summary.tpot.p99_s = 0.01 + value * 1e-4;
    report.axes[0].values.push_back(p.values[0]);
    report.points.push_back(p);
    value *= 2;
  }
  return report;
}

// The latency chart's left (TTFT) and right (TPOT) axes.
std::pair<QAbstractAxis*, QAbstractAxis*> latency_axes(const TradeoffView& view) {
  const QList<QAbstractAxis*> axes = view.latency_chart()->chart()->axes(Qt::Vertical);
  QAbstractAxis* left = nullptr;
  QAbstractAxis* right = nullptr;
  for (QAbstractAxis* a : axes) (a->alignment() == Qt::AlignLeft ? left : right) = a;
  return {left, right};
}

}  // namespace

class ServiceViewsTest : public QObject {
  Q_OBJECT

 private slots:
  void the_saturated_gateway_is_diagnosed_and_its_time_charted() {
    MainWindow w;
    QVERIFY(w.open_template(test::scenario_path("service-gateway-saturated.json")));
    w.document()->set_value("workload.num_requests", nlohmann::json(1500));
    QSignalSpy finished(w.runner(), &SimulationRunner::finished);
    QVERIFY(w.run());
    QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 60000);
    const std::shared_ptr<const RunSnapshot> run = w.shown_result();
    QVERIFY(run);

    // The diagnosis is the run's own, in order, each finding with its evidence.
    const DiagnosisView* why = w.diagnosis_view();
    QCOMPARE(why->list()->count(), int(run->diagnosis.size()));
    bool saturated = false;
    for (int i = 0; i < why->list()->count(); ++i) {
      const Finding& f = run->diagnosis[static_cast<size_t>(i)];
      const QListWidgetItem* item = why->list()->item(i);
      QVERIFY(item->text().startsWith(QString::fromStdString(f.text)));
      for (const Evidence& e : f.evidence) {
        QVERIFY(item->toolTip().contains(QString::fromStdString(e.metric)));
        QVERIFY(item->text().contains(QString::fromStdString(e.metric)));
      }
      saturated = saturated ||
                  (f.code == "station_saturated" && item->toolTip().contains("stations[gateway]"));
    }
    QVERIFY2(saturated, "the gateway's saturation is listed with its evidence");

    // The chart's model holds the summary's segment figures.
    const TimeBreakdown& time = run->result.summary.time;
    const TimeBreakdownModel* model = w.time_breakdown_model();
    QCOMPARE(model->rowCount(), int(TimeBreakdownModel::kRows.size()));
    int gateway_row = -1;
    for (int r = 0; r < model->rowCount(); ++r) {
      const SegmentStats& s = time.segments[static_cast<size_t>(model->segment(r))];
      QCOMPARE(model->value_ms(r, TimeBreakdownModel::kMean), s.mean_s * 1e3);
      QCOMPARE(model->value_ms(r, TimeBreakdownModel::kP50), s.p50_s * 1e3);
      QCOMPARE(model->value_ms(r, TimeBreakdownModel::kP95), s.p95_s * 1e3);
      QCOMPARE(model->value_ms(r, TimeBreakdownModel::kP99), s.p99_s * 1e3);
      QCOMPARE(model->share_of_e2e(r), s.share_of_e2e);
      if (model->segment(r) == Segment::kGateway) gateway_row = r;
    }
    QVERIFY(model->value_ms(gateway_row, TimeBreakdownModel::kMean) > 0.0);

    auto* view = qobject_cast<TimeBreakdownView*>(w.tabs()->widget(MainWindow::kWhereTimeTab));
    QVERIFY(view);
    const QString tip = view->tooltip(gateway_row, TimeBreakdownModel::kP95);
    QVERIFY2(tip.contains(QString::number(
                 time.segments[static_cast<size_t>(Segment::kGateway)].share_of_e2e * 100, 'f', 1)),
             qPrintable(tip));
    const QList<QAbstractSeries*> series = view->chart_view()->chart()->series();
    QCOMPARE(series.size(), 1);
    auto* bars = qobject_cast<QHorizontalStackedBarSeries*>(series[0]);
    QVERIFY(bars);
    const QBarSet* gateway = nullptr;
    for (QBarSet* set : bars->barSets()) {
      if (set->label() == QLatin1String("gateway")) gateway = set;
    }
    QVERIFY(gateway);
    QCOMPARE(gateway->count(), 4);  // mean, p50, p95, p99
    QCOMPARE(gateway->at(2), model->value_ms(gateway_row, TimeBreakdownModel::kP95));
  }

  void the_latency_axis_is_logarithmic_only_across_decades() {
    TradeoffModel model;
    TradeoffView view(&model);
    model.set_report(sweep_with_ttft({0.02, 0.5, 9.0}));  // 450x: log
    auto [ttft, tpot] = latency_axes(view);
    QVERIFY(qobject_cast<QLogValueAxis*>(ttft));
    QVERIFY(ttft->titleText().contains("log scale"));
    QVERIFY(qobject_cast<QValueAxis*>(tpot));  // 10-12 ms
    QVERIFY(tpot->titleText().contains("linear"));

    model.set_report(sweep_with_ttft({0.02, 0.5, 1.9}));  // 95x: linear
    std::tie(ttft, tpot) = latency_axes(view);
    QVERIFY(qobject_cast<QValueAxis*>(ttft));
    QVERIFY(ttft->titleText().contains("linear"));
  }
};

SERVESIM_GUI_TEST(ServiceViewsTest);

}  // namespace servesim::gui

#include "service_views_test.moc"
