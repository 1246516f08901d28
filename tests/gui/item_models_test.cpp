// The item models under QAbstractItemModelTester, fed by a real (small) simulation through
// RunRecorder, plus the recorder's thinning and CDF and the CSV export.
#include <QAbstractItemModelTester>
#include <QTest>
#include <atomic>
#include <memory>

#include "gui/csv_export.h"
#include "gui/latency_cdf_model.h"
#include "gui/memory_plan_model.h"
#include "gui/run_recorder.h"
#include "gui/summary_model.h"
#include "gui/timeline_model.h"
#include "gui_test_registry.h"
#include "models/catalog.h"
#include "sim/scenario.h"

namespace servesim::gui {
namespace {

struct SmallRun {
  Scenario scenario;
  SimulationResult result;
  MemoryPlan plan;
  std::vector<TimelinePoint> timeline;
  std::vector<CdfPoint> cdf;
};

SmallRun small_run() {
  SmallRun run{
      load_scenario(test::scenario_path("quickstart.json").toStdString(),
                    {"workload.num_requests=200", "workload.arrival.rate_qps=8"}, Catalog()),
      {},
      {},
      {},
      {}};
  Simulation simulation(run.scenario.config);
  RunRecorder recorder(std::make_shared<std::atomic<bool>>(false), simulation.config().metrics,
                       nullptr);
  run.result = simulation.run(recorder);
  run.plan = simulation.memory_plan();
  run.timeline = recorder.timeline();
  run.cdf = recorder.cdf();
  return run;
}

}  // namespace

class ItemModelsTest : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() { run_ = std::make_unique<SmallRun>(small_run()); }

  void summary_model() {
    SummaryModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    const SloSpec& slo = run_->scenario.config.metrics.slo;
    model.set_summary(run_->result.summary, slo);
    QVERIFY(model.rowCount() > 20);
    QCOMPARE(model.columnCount(), int(SummaryModel::kColumnCount));
    const int ttft = model.row_of("TTFT p99");
    QVERIFY(ttft >= 0);
    const bool meets = run_->result.summary.ttft.p99_s <= *slo.ttft_s;
    QCOMPARE(model.verdict(ttft),
             meets ? SummaryModel::Verdict::kPass : SummaryModel::Verdict::kFail);
    QCOMPARE(model.data(model.index(ttft, SummaryModel::kSlo)).toString(), QString("≤ 500.0 ms"));
    QCOMPARE(model.verdict(model.row_of("ITL p99")), SummaryModel::Verdict::kNone);

    SloSpec strict;
    strict.tpot_s = 1e-6;
    model.set_summary(run_->result.summary, strict);
    QCOMPARE(model.verdict(model.row_of("TPOT p99")), SummaryModel::Verdict::kFail);
    QCOMPARE(model.data(model.index(model.row_of("TPOT p99"), SummaryModel::kResult)).toString(),
             QString("FAIL"));
    QCOMPARE(model.verdict(model.row_of("TTFT p99")), SummaryModel::Verdict::kNone);
    model.clear();
    QCOMPARE(model.rowCount(), 0);
  }

  void memory_plan_model() {
    MemoryPlanModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    QCOMPARE(model.rowCount(), 0);
    model.set_plan(run_->plan);
    QCOMPARE(model.rowCount(), int(MemoryPlanModel::kRowCount));
    QCOMPARE(model.bytes(MemoryPlanModel::kKvCache), run_->plan.kv_cache_bytes);
    int64_t sum = 0;
    for (int r = 0; r < MemoryPlanModel::kRowCount; ++r) {
      sum += model.bytes(static_cast<MemoryPlanModel::Row>(r));
    }
    QCOMPARE(sum, run_->plan.total_bytes);  // the components add up to the GPU
    model.set_plan(std::nullopt);
    QCOMPARE(model.rowCount(), 0);
  }

  void timeline_model() {
    TimelineModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    model.set_points(run_->timeline);
    QVERIFY(model.rowCount() > 10);
    double max_running = 0;
    for (int r = 0; r < model.rowCount(); ++r) {
      max_running = std::max(max_running, model.value(r, TimelineModel::kRunning));
      QVERIFY(model.value(r, TimelineModel::kKvUsage) <= 100.0);
    }
    QVERIFY(max_running > 0);
    model.set_points({});
    QCOMPARE(model.rowCount(), 0);
  }

  void latency_cdf_model() {
    LatencyCdfModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    model.set_data(run_->cdf, run_->result.summary);
    QCOMPARE(model.rowCount(), 201);
    for (int r = 1; r < model.rowCount(); ++r) {
      QVERIFY(model.value_ms(r, LatencyCdfModel::kE2e) >=
              model.value_ms(r - 1, LatencyCdfModel::kE2e));
    }
    // The last point is the maximum the summary reports.
    QCOMPARE(model.value_ms(200, LatencyCdfModel::kTtft),
             static_cast<double>(static_cast<float>(run_->result.summary.ttft.max_s)) * 1e3);
    const auto marks = model.marks(LatencyCdfModel::kTtft);
    QCOMPARE(marks[2].percentile, 99.0);
    QCOMPARE(marks[2].value_ms, run_->result.summary.ttft.p99_s * 1e3);
  }

  void recorder_thins_and_folds_replicas() {
    RunRecorder recorder(std::make_shared<std::atomic<bool>>(false), {}, nullptr, 100);
    for (int t = 0; t < 10000; ++t) {
      for (int replica = 0; replica < 2; ++replica) {
        recorder.on_sample({.time_s = double(t),
                            .replica = replica,
                            .running = 3,
                            .waiting = 1,
                            .kv_usage = replica == 0 ? 0.2 : 0.4,
                            .tokens_in_step = 10,
                            .preemptions_total = t});
      }
    }
    const std::vector<TimelinePoint> points = recorder.timeline();
    QVERIFY(points.size() <= 201);
    QVERIFY(points.size() >= 100);
    QCOMPARE(points.front().time_s, 0.0);
    QCOMPARE(points.back().time_s, 9999.0);  // the last sample is always kept
    for (size_t i = 1; i < points.size(); ++i) QVERIFY(points[i].time_s > points[i - 1].time_s);
    QCOMPARE(points[1].running, 6);
    QCOMPARE(points[1].waiting, 2);
    QCOMPARE(points[1].kv_usage, 0.3);
    QCOMPARE(points[1].tokens_in_step, 20);
    QCOMPARE(points[1].preemptions_total, 2 * int(points[1].time_s));
  }

  void recorder_stops_on_the_flag() {
    auto stop = std::make_shared<std::atomic<bool>>(false);
    RunRecorder recorder(stop, {}, nullptr);
    QVERIFY(!recorder.should_stop());
    stop->store(true);
    QVERIFY(recorder.should_stop());
    QVERIFY(recorder.cdf().empty());
  }

  void csv_export() {
    TimelineModel model;
    model.set_points({{.time_s = 1.5,
                       .running = 2,
                       .waiting = 0,
                       .kv_usage = 0.25,
                       .tokens_in_step = 40,
                       .preemptions_total = 1}});
    QCOMPARE(to_csv(model),
             QString("time_s,running,waiting,kv_usage_percent,tokens_in_step,preemptions_total\n"
                     "1.5,2,0,25,40,1\n"));
    SummaryModel summary;
    summary.set_summary(run_->result.summary, {});
    const QStringList lines = to_csv(summary).split('\n', Qt::SkipEmptyParts);
    QCOMPARE(lines.size(), summary.rowCount() + 1);
    QCOMPARE(lines.front(), QString("Metric,Value,SLO,p99 meets SLO"));
  }

 private:
  std::unique_ptr<SmallRun> run_;
};

SERVESIM_GUI_TEST(ItemModelsTest);

}  // namespace servesim::gui

#include "item_models_test.moc"
