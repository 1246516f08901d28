// The item models under QAbstractItemModelTester, fed by a real (small) simulation through
// RunRecorder, plus the recorder's thinning and CDF and the CSV export.
#include <QAbstractItemModelTester>
#include <QTest>
#include <atomic>
#include <cmath>
#include <memory>

#include "gui/compare_model.h"
#include "gui/csv_export.h"
#include "gui/latency_cdf_model.h"
#include "gui/memory_plan_model.h"
#include "gui/run_recorder.h"
#include "gui/summary_model.h"
#include "gui/timeline_model.h"
#include "gui/tradeoff_model.h"
#include "gui_test_registry.h"
#include "models/catalog.h"
#include "models/json_file.h"
#include "plan/sweep.h"
#include "sim/run/simulation.h"
#include "sim/scenario/scenario.h"

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

  void memory_plan_model_computes_its_plan() {
    MemoryPlanModel model(Catalog().gpus());
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    model.compute(&run_->scenario.config);
    QCOMPARE(model.rowCount(), int(MemoryPlanModel::kRowCount));
    QCOMPARE(model.plan()->kv_cache_bytes, run_->plan.kv_cache_bytes);  // as the run sized it
    QVERIFY(model.problem().isEmpty());

    SimulationConfig too_big = run_->scenario.config;
    too_big.model = Catalog().resolve_model("Llama-2-70B");  // 140 GB on one GPU
    model.compute(&too_big);
    QVERIFY(!model.plan()->fits());                             // shown anyway, with by how much
    QVERIFY(model.problem().contains("tensor-parallel-size"));  // and the fix

    model.compute(nullptr);
    QCOMPARE(model.rowCount(), 0);
  }

  void memory_plan_model_per_pipeline_stage() {
    const Scenario s =
        load_scenario(test::scenario_path("quickstart.json").toStdString(),
                      {"model=Llama-2-13B", "parallel.pipeline_parallel_size=2"}, Catalog());
    const SimulationConfig& c = s.config;
    MemoryPlanModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    model.set_plan(MemoryPlan::compute_unchecked(c.model, c.gpu, c.parallel, c.engine));
    QCOMPARE(model.stage_count(), 2);
    QCOMPARE(model.columnCount(), int(MemoryPlanModel::kColumnCount) + 2);
    QVERIFY(model.headerData(MemoryPlanModel::kColumnCount, Qt::Horizontal)
                .toString()
                .startsWith("Stage 0 GiB"));
    // The GiB column shows the busiest stage; each stage's components fill its GPU.
    const MemoryPlan& plan = *model.plan();
    QCOMPARE(std::max(model.stage_bytes(MemoryPlanModel::kWeights, 0),
                      model.stage_bytes(MemoryPlanModel::kWeights, 1)),
             plan.weights_bytes);
    // The KV cache is that of the stage with the fewest blocks (bytes over its layers).
    QVERIFY(model.stage_bytes(MemoryPlanModel::kKvCache, 0) == plan.kv_cache_bytes ||
            model.stage_bytes(MemoryPlanModel::kKvCache, 1) == plan.kv_cache_bytes);
    for (int stage = 0; stage < 2; ++stage) {
      int64_t sum = 0;
      for (int r = 0; r < MemoryPlanModel::kRowCount; ++r) {
        sum += model.stage_bytes(static_cast<MemoryPlanModel::Row>(r), stage);
      }
      QCOMPARE(sum, plan.total_bytes);
    }
    model.set_plan(run_->plan);  // pp = 1: no stage columns
    QCOMPARE(model.stage_count(), 0);
    QCOMPARE(model.columnCount(), int(MemoryPlanModel::kColumnCount));
  }

  void tradeoff_model() {
    TradeoffModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    QCOMPARE(model.rowCount(), 0);
    SweepOptions o;
    o.axes = {parse_sweep_axis("engine.max_num_seqs=4,64")};
    o.overrides = {"workload.num_requests=120", "workload.arrival.rate_qps=8"};
    const std::string path = test::scenario_path("quickstart.json").toStdString();
    model.set_report(run_sweep(path, o, Catalog()));
    QCOMPARE(model.rowCount(), 2);
    QCOMPARE(model.headerData(TradeoffModel::kValue, Qt::Horizontal).toString(),
             QString("engine.max_num_seqs"));
    QVERIFY(model.numeric_values());
    QCOMPARE(model.x(0), 4.0);
    // Fewer sequences per batch: each user decodes faster, each GPU delivers less.
    QVERIFY(model.value(0, TradeoffModel::kPerUser) > model.value(1, TradeoffModel::kPerUser));
    QVERIFY(model.value(0, TradeoffModel::kPerGpu) < model.value(1, TradeoffModel::kPerGpu));
    QCOMPARE(model.value(1, TradeoffModel::kTtftP99),
             model.report().points[1].result.summary.ttft.p99_s * 1e3);

    // Names (not numbers) and a point that cannot run.
    o.axes = {parse_sweep_axis("gpu=A100-80GB,T4")};
    o.overrides = {"workload.num_requests=40", "model=Llama-2-13B"};
    model.set_report(run_sweep(path, o, Catalog()));
    QVERIFY(!model.numeric_values());
    QCOMPARE(model.x(1), 1.0);
    QVERIFY(std::isnan(model.value(1, TradeoffModel::kThroughput)));
    QVERIFY(!model.data(model.index(1, TradeoffModel::kError)).toString().isEmpty());
    QVERIFY(model.data(model.index(1, TradeoffModel::kThroughput)).toString().isEmpty());
  }

  void compare_model() {
    CompareModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    RunSnapshot snapshot;
    snapshot.result = run_->result;
    snapshot.plan = run_->plan;
    snapshot.cdf = run_->cdf;
    model.add(CompareModel::entry_of(snapshot, "a"));
    model.add(CompareModel::entry_of(snapshot, "a"));
    model.add(CompareModel::entry_of(snapshot, "b"));
    QCOMPARE(model.rowCount(), 3);
    QCOMPARE(model.entries()[1].name, QString("a (2)"));
    QCOMPARE(model.value(0, CompareModel::kTtftP99), run_->result.summary.ttft.p99_s * 1e3);
    QCOMPARE(model.value(0, CompareModel::kGpus), 1.0);
    // The quickstart names no price: the cost cell says so instead of showing "nan".
    QVERIFY(std::isnan(model.value(0, CompareModel::kCost)) ||
            model.value(0, CompareModel::kCost) > 0);
    QVERIFY(!model.data(model.index(0, CompareModel::kCost)).toString().contains("nan"));
    // Renaming through the table keeps names unique and refuses an empty one.
    QVERIFY(model.setData(model.index(2, CompareModel::kScenario), " a "));
    QCOMPARE(model.entries()[2].name, QString("a (3)"));
    QVERIFY(!model.setData(model.index(2, CompareModel::kScenario), "  "));
    QVERIFY(!model.setData(model.index(2, CompareModel::kGpus), "4"));
    QVERIFY(model.setData(model.index(2, CompareModel::kScenario), "b"));
    model.remove(1);
    model.remove(7);  // ignored
    QCOMPARE(model.rowCount(), 2);
    QCOMPARE(model.entries()[1].name, QString("b"));
    const QStringList lines = to_csv(model).split('\n', Qt::SkipEmptyParts);
    QCOMPARE(lines.size(), 3);
    QVERIFY(lines[0].startsWith("Scenario,GPUs,TTFT p50 (ms),TTFT p99 (ms)"));
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
