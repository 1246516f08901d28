// The Trade-offs and Compare tabs driven as a user would: a sweep from the tab's Run button,
// its cancel and a superseded sweep, bad sweep values in place; a comparison of two
// scenarios (the current result and opened files), removal, CSV and PNG export; result
// folders (simulated and measured) opened into the comparison.
#include <QAbstractItemModelTester>
#include <QAction>
#include <QDir>
#include <QFile>
#include <QImage>
#include <QLineEdit>
#include <QPushButton>
#include <QSettings>
#include <QSignalSpy>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>

#include "gui/compare_controller.h"
#include "gui/compare_model.h"
#include "gui/compare_view.h"
#include "gui/main_window.h"
#include "gui/scenario_document.h"
#include "gui/simulation_runner.h"
#include "gui/sweep_runner.h"
#include "gui/tradeoff_controller.h"
#include "gui/tradeoff_model.h"
#include "gui/tradeoff_view.h"
#include "gui_test_registry.h"

namespace servesim::gui {
namespace {

void open_small_quickstart(MainWindow& w, int num_requests = 150) {
  QVERIFY(w.open_template(test::scenario_path("quickstart.json")));
  w.document()->set_value("workload.num_requests", nlohmann::json(num_requests));
  QVERIFY2(w.document()->error().isEmpty(), qPrintable(w.document()->error()));
}

QAction* action(MainWindow& w, const char* name) {
  return w.findChild<QAction*>(QString::fromLatin1(name));
}

// A copy of the quickstart with a few keys changed, as a scenario file of its own.
QString write_scenario(const QTemporaryDir& dir, const QString& name, double rate_qps) {
  nlohmann::json j = nlohmann::json::parse([] {
    QFile f(test::scenario_path("quickstart.json"));
    f.open(QIODevice::ReadOnly);
    return f.readAll().toStdString();
  }());
  j["name"] = name.toStdString();
  j["workload"]["num_requests"] = 150;
  j["workload"]["arrival"]["rate_qps"] = rate_qps;
  const QString path = dir.filePath(name + ".json");
  QFile out(path);
  out.open(QIODevice::WriteOnly);
  out.write(QByteArray::fromStdString(j.dump(2)));
  return path;
}

// A result folder as `--out` writes it: summary.json (with `extra_setup` at its top level and
// `summary`) and requests.csv rows with the given TTFTs (seconds).
QString write_run_folder(const QTemporaryDir& dir, const QString& name, const std::string& setup,
                         const std::string& summary, const std::vector<double>& ttft_s) {
  QDir(dir.path()).mkpath(name);
  const QString path = dir.filePath(name);
  QFile json(path + "/summary.json");
  json.open(QIODevice::WriteOnly);
  json.write(QByteArray::fromStdString("{" + setup + "\"summary\": " + summary + "}"));
  QFile csv(path + "/requests.csv");
  csv.open(QIODevice::WriteOnly);
  csv.write("id,status,ttft_s,tpot_s,e2e_s\n");
  for (size_t i = 0; i < ttft_s.size(); ++i) {
    csv.write(QByteArray::fromStdString(std::to_string(i) + ",ok," + std::to_string(ttft_s[i]) +
                                        ",0.01," + std::to_string(ttft_s[i] + 1) + "\n"));
  }
  return path;
}

}  // namespace

class AnalysisViewsTest : public QObject {
  Q_OBJECT

 private slots:
  void a_sweep_started_from_the_tab_fills_the_trade_off_charts() {
    MainWindow w;
    open_small_quickstart(w);
    QAbstractItemModelTester tester(w.tradeoffs()->model(),
                                    QAbstractItemModelTester::FailureReportingMode::QtTest);
    w.tradeoffs()->view()->set_knob("engine.max_num_seqs", "8,64");
    QSignalSpy finished(w.tradeoffs()->runner(), &SweepRunner::finished);
    QSignalSpy progress(w.tradeoffs()->runner(), &SweepRunner::progress);
    QTest::mouseClick(w.tradeoffs()->view()->run_button(), Qt::LeftButton);
    QVERIFY(w.tradeoffs()->runner()->busy());
    QVERIFY(action(w, "cancel_action")->isEnabled());
    QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 30000);
    QCOMPARE(progress.count(), 2);
    QCOMPARE(w.tradeoffs()->model()->rowCount(), 2);
    QCOMPARE(w.tradeoffs()->model()->key(), QString("engine.max_num_seqs"));
    QVERIFY(w.tradeoffs()->model()->numeric_values());
    QCOMPARE(w.tradeoffs()->model()->x(1), 64.0);
    for (int r = 0; r < 2; ++r) {
      QVERIFY(w.tradeoffs()->model()->value(r, TradeoffModel::kTtftP99) > 0);
      QVERIFY(w.tradeoffs()->model()->value(r, TradeoffModel::kPerUser) > 0);
    }
    QVERIFY2(w.tradeoffs()->view()->message().contains("2 points"),
             qPrintable(w.tradeoffs()->view()->message()));
    QVERIFY(!action(w, "cancel_action")->isEnabled());
    // Remembered for the next session, and the CLI runs the same sweep.
    QCOMPARE(QSettings().value("sweep/values").toString(), QString("8,64"));
    w.tabs()->setCurrentIndex(MainWindow::kTradeoffsTab);
    QCOMPARE(w.cli_command(),
             QString("servesim sweep SCENARIO.json --vary engine.max_num_seqs=8,64"));
    MainWindow next_session;
    QCOMPARE(next_session.tradeoffs()->view()->key(), QString("engine.max_num_seqs"));
    QCOMPARE(next_session.tradeoffs()->view()->values(), QString("8,64"));

    QTemporaryDir dir;
    QVERIFY(w.export_csv(MainWindow::kTradeoffsTab, dir.filePath("sweep.csv")));
    QFile csv(dir.filePath("sweep.csv"));
    QVERIFY(csv.open(QIODevice::ReadOnly));
    QVERIFY(csv.readLine().startsWith("engine.max_num_seqs,TTFT p99 (ms)"));
  }

  void bad_sweep_values_are_explained_and_kept() {
    MainWindow w;
    open_small_quickstart(w);
    w.tradeoffs()->view()->set_knob("engine.max_num_seqs", "16:8:4");
    QVERIFY(!w.tradeoffs()->run_sweep());
    QVERIFY(!w.tradeoffs()->runner()->busy());
    QVERIFY2(w.tradeoffs()->view()->message().contains("STOP must be >= START"),
             qPrintable(w.tradeoffs()->view()->message()));
    QCOMPARE(w.tradeoffs()->view()->values(), QString("16:8:4"));  // nothing typed is lost

    // A key the scenario does not have fails in the worker, with the key named.
    QSignalSpy failed(w.tradeoffs()->runner(), &SweepRunner::failed);
    w.tradeoffs()->view()->set_knob("engine.max_num_seq", "8,16");
    QVERIFY(w.tradeoffs()->run_sweep());
    QTRY_COMPARE_WITH_TIMEOUT(failed.count(), 1, 20000);
    QVERIFY(w.tradeoffs()->view()->message().contains("max_num_seq"));

    w.document()->set_value("parallel.tensor_parallel_size", nlohmann::json(3));
    w.tradeoffs()->view()->set_knob("engine.max_num_seqs", "8,16");
    QVERIFY(!w.tradeoffs()->run_sweep());
    QVERIFY(w.tradeoffs()->view()->message().startsWith("Cannot sweep"));
  }

  void cancel_keeps_the_previous_sweep() {
    MainWindow w;
    open_small_quickstart(w, 100);
    w.tradeoffs()->view()->set_knob("engine.max_num_seqs", "8,16");
    QSignalSpy finished(w.tradeoffs()->runner(), &SweepRunner::finished);
    QVERIFY(w.tradeoffs()->run_sweep());
    QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 30000);

    w.document()->set_value("workload.num_requests", nlohmann::json(5000000));
    QSignalSpy cancelled(w.tradeoffs()->runner(), &SweepRunner::cancelled);
    QVERIFY(w.tradeoffs()->run_sweep());
    QTest::qWait(100);
    action(w, "cancel_action")->trigger();  // Esc
    QTRY_COMPARE_WITH_TIMEOUT(cancelled.count(), 1, 20000);
    QCOMPARE(w.tradeoffs()->model()->rowCount(), 2);
    QCOMPARE(w.tradeoffs()->model()->report().points[0].result.summary.completed, uint64_t{100});
    QVERIFY(w.tradeoffs()->view()->message().contains("cancelled"));
    QVERIFY(w.tradeoffs()->view()->cancel_button()->isHidden());
  }

  void a_newer_sweep_supersedes_an_older_one() {
    MainWindow w;
    open_small_quickstart(w, 5000000);
    w.tradeoffs()->view()->set_knob("engine.max_num_seqs", "8,16");
    QSignalSpy finished(w.tradeoffs()->runner(), &SweepRunner::finished);
    QVERIFY(w.tradeoffs()->run_sweep());
    QTest::qWait(50);
    w.document()->set_value("workload.num_requests", nlohmann::json(90));
    w.tradeoffs()->view()->set_knob("workload.arrival.rate_qps", "1:3:2");
    action(w, "sweep_action")->trigger();
    QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 30000);
    w.tradeoffs()->runner()->wait_for_all();
    QCoreApplication::processEvents();
    QCOMPARE(finished.count(), 1);
    QCOMPARE(w.tradeoffs()->model()->key(), QString("workload.arrival.rate_qps"));
    QCOMPARE(w.tradeoffs()->model()->rowCount(), 2);
    QCOMPARE(w.tradeoffs()->model()->report().points[1].result.summary.completed, uint64_t{90});
    QCOMPARE(w.tabs()->currentIndex(), int(MainWindow::kTradeoffsTab));
  }

  void two_scenarios_side_by_side() {
    QTemporaryDir dir;
    MainWindow w;
    QAbstractItemModelTester tester(w.compare()->model(),
                                    QAbstractItemModelTester::FailureReportingMode::QtTest);
    QVERIFY(!w.compare()->add_shown_result());  // nothing run yet: said so, nothing added
    QVERIFY(w.compare()->view()->message().contains("run the scenario first"));

    open_small_quickstart(w);
    QSignalSpy finished(w.runner(), &SimulationRunner::finished);
    QVERIFY(w.run());
    QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 20000);
    action(w, "compare_add_action")->trigger();
    QCOMPARE(w.compare()->model()->rowCount(), 1);
    QCOMPARE(w.compare()->model()->entries()[0].name, QString("quickstart"));

    // Two files, one of them broken: the good one runs and joins, the bad one is named.
    const QString busy = write_scenario(dir, "busy", 8);
    const QString broken = dir.filePath("broken.json");
    QFile b(broken);
    QVERIFY(b.open(QIODevice::WriteOnly));
    b.write(
        "{\"model\": \"Llama-2-7B\", \"gpu\": \"A100-80GB\", \"workload\": {}, \"enginex\": 1}");
    b.close();
    QSignalSpy compared(w.compare()->runner(), &SimulationRunner::finished);
    QVERIFY(w.compare()->compare_files({busy, broken}));
    QTRY_COMPARE_WITH_TIMEOUT(compared.count(), 1, 20000);
    QCOMPARE(w.compare()->model()->rowCount(), 2);
    QCOMPARE(w.compare()->model()->entries()[1].name, QString("busy"));
    QVERIFY2(w.compare()->view()->message().contains("Added busy"),
             qPrintable(w.compare()->view()->message()));

    // Twice the offered load: more throughput, and the table says so.
    CompareModel* m = w.compare()->model();
    QVERIFY(m->value(1, CompareModel::kRequestRate) > m->value(0, CompareModel::kRequestRate));
    QCOMPARE(m->value(0, CompareModel::kGpus), 1.0);
    QCOMPARE(m->data(m->index(0, CompareModel::kScenario)).toString(), QString("quickstart"));
    QVERIFY(!m->entries()[1].cdf.empty());

    QVERIFY(w.export_csv(MainWindow::kCompareTab, dir.filePath("compare.csv")));
    QFile csv(dir.filePath("compare.csv"));
    QVERIFY(csv.open(QIODevice::ReadOnly));
    QVERIFY(csv.readLine().startsWith("Scenario,GPUs,TTFT p50 (ms)"));
    QVERIFY(csv.readLine().startsWith("quickstart,1,"));
    QVERIFY(w.export_png(MainWindow::kCompareTab, dir.filePath("compare.png")));
    QVERIFY(QImage(dir.filePath("compare.png")).width() > 100);

    // The same result again gets a name of its own.
    QVERIFY(w.compare()->add_shown_result());
    QCOMPARE(m->entries()[2].name, QString("quickstart (2)"));
    w.compare()->view()->table()->selectRow(0);
    QVERIFY(w.compare()->view()->remove_selected());
    QCOMPARE(m->rowCount(), 2);
    QCOMPARE(m->entries()[0].name, QString("busy"));
    // Delete in the table does the same (a shortcut needs the window shown and active).
    w.show();
    w.activateWindow();
    QVERIFY(QTest::qWaitForWindowActive(&w));
    w.tabs()->setCurrentIndex(MainWindow::kCompareTab);
    w.compare()->view()->table()->selectRow(1);
    w.compare()->view()->table()->setFocus();
    QTest::keyClick(w.compare()->view()->table(), Qt::Key_Delete);
    QCOMPARE(m->rowCount(), 1);
    QVERIFY(!w.compare()->view()->remove_selected());  // nothing selected any more
  }

  void run_folders_join_the_comparison() {
    QTemporaryDir dir;
    MainWindow w;
    QAbstractItemModelTester tester(w.compare()->model(),
                                    QAbstractItemModelTester::FailureReportingMode::QtTest);
    QVERIFY(action(w, "compare_open_folder_action") != nullptr);
    QVERIFY(w.compare()->view()->findChild<QPushButton*>("compare_open_folder") != nullptr);
    const QString sim = write_run_folder(
        dir, "sim",
        R"("simulated_s": 9, "tensor_parallel_size": 2, "pipeline_parallel_size": 1,
           "data_parallel_size": 1, )",
        R"({"completed": 3, "request_throughput_per_s": 1.5, "ttft": {"p50_ms": 40}})",
        {0.03, 0.04, 0.05});
    const QString measured =
        write_run_folder(dir, "measured", "",
                         R"({"completed": 2, "ttft": {"p50_ms": 400}, "itl": null})", {0.3, 0.5});
    const QString missing = dir.filePath("not-a-run");

    QVERIFY(w.compare()->open_run_folders({sim, measured, missing}));
    CompareModel* m = w.compare()->model();
    QCOMPARE(m->rowCount(), 2);
    QCOMPARE(m->entries()[0].name, QString("sim"));
    QCOMPARE(m->entries()[1].name, QString("measured"));
    QCOMPARE(m->value(0, CompareModel::kGpus), 2.0);
    QCOMPARE(m->value(1, CompareModel::kTtftP50), 400.0);
    // What a folder lacks is a dash, not a zero.
    QCOMPARE(m->data(m->index(1, CompareModel::kGpus)).toString(), QString("–"));
    QCOMPARE(m->data(m->index(1, CompareModel::kRequestRate)).toString(), QString("–"));
    QCOMPARE(m->entries()[1].cdf.size(), size_t{201});
    QCOMPARE(m->entries()[1].cdf.back().ttft_s, 0.5);
    const QString message = w.compare()->view()->message();
    QVERIFY2(message.startsWith("Added sim, measured"), qPrintable(message));
    QVERIFY2(message.contains(missing + ": no such folder"), qPrintable(message));

    // The same folder again gets a name of its own; a folder that is not a run adds nothing.
    QVERIFY(w.compare()->open_run_folders({sim}));
    QCOMPARE(m->entries()[2].name, QString("sim (2)"));
    QVERIFY(!w.compare()->open_run_folders({dir.path()}));
    QCOMPARE(m->rowCount(), 3);
    QVERIFY2(w.compare()->view()->message().contains("summary.json: missing"),
             qPrintable(w.compare()->view()->message()));
  }

  void only_broken_files_leave_the_comparison_unchanged() {
    QTemporaryDir dir;
    MainWindow w;
    QVERIFY(!w.compare()->compare_files({dir.filePath("missing.json")}));
    QCOMPARE(w.compare()->model()->rowCount(), 0);
    QVERIFY(w.compare()->view()->message().startsWith("Nothing to compare"));
    QVERIFY(w.compare()->view()->message().contains("missing.json"));
    QVERIFY(!w.compare()->runner()->busy());
  }
};

SERVESIM_GUI_TEST(AnalysisViewsTest);

}  // namespace servesim::gui

#include "analysis_views_test.moc"
