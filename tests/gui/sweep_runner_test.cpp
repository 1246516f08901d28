// SweepRunner (a JobLauncher): a sweep in the background with progress per point, cancel, a
// superseded sweep dropped, and a bad key reported as a failure.
#include "gui/sweep_runner.h"

#include <QElapsedTimer>
#include <QSignalSpy>
#include <QTest>

#include "gui_test_registry.h"
#include "models/json_file.h"

namespace servesim::gui {
namespace {

nlohmann::json quickstart(int num_requests) {
  nlohmann::json j = load_json_file(test::scenario_path("quickstart.json").toStdString());
  j["workload"]["num_requests"] = num_requests;
  return j;
}

SweepOptions vary(const std::string& spec) {
  SweepOptions o;
  o.axes = {parse_sweep_axis(spec)};
  return o;
}

std::string scenarios_dir() {
  return test::scenario_path({}).toStdString();
}

}  // namespace

class SweepRunnerTest : public QObject {
  Q_OBJECT

 private slots:
  void sweeps_in_the_background_and_reports_each_point() {
    SweepRunner runner;
    QSignalSpy finished(&runner, &SweepRunner::finished);
    QSignalSpy progress(&runner, &SweepRunner::progress);
    const uint64_t job = runner.start(quickstart(100), scenarios_dir(), "quickstart.json",
                                      vary("engine.max_num_seqs=8,32,128"));
    QVERIFY(runner.busy());
    QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 30000);
    QVERIFY(!runner.busy());
    const auto snapshot = finished.at(0).at(0).value<std::shared_ptr<const SweepSnapshot>>();
    QCOMPARE(snapshot->job, job);
    QCOMPARE(snapshot->report.points.size(), size_t{3});
    for (const SweepPoint& p : snapshot->report.points) {
      QVERIFY2(p.error.empty(), p.error.c_str());
      QCOMPARE(p.result.summary.completed, uint64_t{100});
    }
    QCOMPARE(progress.count(), 3);
    QCOMPARE(progress.last().at(1).toInt(), 3);
    QCOMPARE(progress.last().at(2).toInt(), 3);
  }

  void cancel_stops_it_and_reports_cancelled() {
    SweepRunner runner;
    QSignalSpy cancelled(&runner, &SweepRunner::cancelled);
    QSignalSpy finished(&runner, &SweepRunner::finished);
    const uint64_t job = runner.start(quickstart(5000000), scenarios_dir(), "quickstart.json",
                                      vary("engine.max_num_seqs=8,16"));
    QTest::qWait(100);
    runner.cancel();
    QTRY_COMPARE_WITH_TIMEOUT(cancelled.count(), 1, 20000);
    QCOMPARE(cancelled.at(0).at(0).toULongLong(), job);
    QCOMPARE(finished.count(), 0);
    QVERIFY(!runner.busy());
  }

  void a_newer_sweep_supersedes_an_older_one() {
    SweepRunner runner;
    QSignalSpy finished(&runner, &SweepRunner::finished);
    QSignalSpy cancelled(&runner, &SweepRunner::cancelled);
    runner.start(quickstart(5000000), scenarios_dir(), "quickstart.json",
                 vary("engine.max_num_seqs=8,16"));
    QTest::qWait(50);
    const uint64_t newer = runner.start(quickstart(80), scenarios_dir(), "quickstart.json",
                                        vary("workload.arrival.rate_qps=1,4"));
    QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 30000);
    runner.wait_for_all();
    QCoreApplication::processEvents();  // whatever the old sweep still posted
    QCOMPARE(finished.count(), 1);
    QCOMPARE(cancelled.count(), 0);
    const auto snapshot = finished.at(0).at(0).value<std::shared_ptr<const SweepSnapshot>>();
    QCOMPARE(snapshot->job, newer);
    QCOMPARE(snapshot->report.axes.front().key, std::string("workload.arrival.rate_qps"));
  }

  void a_misspelt_key_fails_with_the_key_named() {
    SweepRunner runner;
    QSignalSpy failed(&runner, &SweepRunner::failed);
    runner.start(quickstart(50), scenarios_dir(), "quickstart.json",
                 vary("engine.max_num_seq=8,16"));
    QTRY_COMPARE_WITH_TIMEOUT(failed.count(), 1, 20000);
    QVERIFY(failed.at(0).at(1).toString().contains("max_num_seq"));
    QVERIFY(!runner.busy());
  }

  void destroying_the_runner_stops_its_sweep() {
    QElapsedTimer timer;
    timer.start();
    {
      SweepRunner runner;
      runner.start(quickstart(5000000), scenarios_dir(), "quickstart.json",
                   vary("engine.max_num_seqs=8,16,32"));
      QTest::qWait(50);
    }
    QVERIFY(timer.elapsed() < 20000);
  }
};

SERVESIM_GUI_TEST(SweepRunnerTest);

}  // namespace servesim::gui

#include "sweep_runner_test.moc"
