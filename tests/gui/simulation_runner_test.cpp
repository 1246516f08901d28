// SimulationRunner, and through it JobLauncher's rules: background runs, progress, cancel,
// superseded runs dropped, failures, shutdown.
#include "gui/simulation_runner.h"

#include <QElapsedTimer>
#include <QSignalSpy>
#include <QTest>

#include "gui_test_registry.h"
#include "models/catalog.h"
#include "sim/scenario/scenario.h"

namespace servesim::gui {
namespace {

SimulationConfig quickstart(std::vector<std::string> overrides) {
  return load_scenario(test::scenario_path("quickstart.json").toStdString(), overrides, Catalog())
      .config;
}

// Long enough (minutes) that it is certainly still running when the test acts on it.
SimulationConfig long_run() {
  return quickstart({"workload.num_requests=5000000"});
}
SimulationConfig short_run() {
  return quickstart({"workload.num_requests=100"});
}

}  // namespace

class SimulationRunnerTest : public QObject {
  Q_OBJECT

 private slots:
  void runs_in_the_background_and_reports() {
    SimulationRunner runner;
    QSignalSpy finished(&runner, &SimulationRunner::finished);
    QSignalSpy progress(&runner, &SimulationRunner::progress);
    const uint64_t job = runner.start(short_run());
    QCOMPARE(job, uint64_t{1});
    QVERIFY(runner.busy());
    QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 20000);
    QVERIFY(!runner.busy());
    const auto snapshot = finished.at(0).at(0).value<std::shared_ptr<const RunSnapshot>>();
    QCOMPARE(snapshot->job, job);
    QCOMPARE(snapshot->result.summary.completed, uint64_t{100});
    QVERIFY(!snapshot->result.stopped);
    QVERIFY(!snapshot->timeline.empty());
    QVERIFY(!snapshot->cdf.empty());
    QVERIFY(progress.count() >= 1);
    QCOMPARE(progress.last().at(1).toDouble(), 1.0);
  }

  void cancel_stops_the_run_and_reports_no_result() {
    SimulationRunner runner;
    QSignalSpy finished(&runner, &SimulationRunner::finished);
    QSignalSpy cancelled(&runner, &SimulationRunner::cancelled);
    QSignalSpy progress(&runner, &SimulationRunner::progress);
    const uint64_t job = runner.start(long_run());
    QTRY_VERIFY_WITH_TIMEOUT(progress.count() >= 1, 20000);  // it is really running
    QElapsedTimer timer;
    timer.start();
    runner.cancel();
    QTRY_COMPARE_WITH_TIMEOUT(cancelled.count(), 1, 10000);
    QCOMPARE(cancelled.at(0).at(0).toULongLong(), job);
    QVERIFY(timer.elapsed() < 5000);
    QCOMPARE(finished.count(), 0);
    QVERIFY(!runner.busy());
  }

  void a_superseded_run_is_dropped() {
    SimulationRunner runner;
    QSignalSpy finished(&runner, &SimulationRunner::finished);
    QSignalSpy cancelled(&runner, &SimulationRunner::cancelled);
    QSignalSpy failed(&runner, &SimulationRunner::failed);
    QSignalSpy progress(&runner, &SimulationRunner::progress);
    const uint64_t old_job = runner.start(long_run());
    QTRY_VERIFY_WITH_TIMEOUT(progress.count() >= 1, 20000);
    const uint64_t new_job = runner.start(short_run());
    QVERIFY(new_job > old_job);
    QCOMPARE(runner.current_job(), new_job);
    QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 20000);
    runner.wait_for_all();
    QCoreApplication::processEvents();  // whatever the old job still posted
    QCOMPARE(finished.count(), 1);
    QCOMPARE(finished.at(0).at(0).value<std::shared_ptr<const RunSnapshot>>()->job, new_job);
    QCOMPARE(cancelled.count(), 0);
    QCOMPARE(failed.count(), 0);
    const qsizetype before_new = progress.count();
    for (qsizetype i = 0; i < progress.count(); ++i) {
      if (progress.at(i).at(0).toULongLong() == new_job) continue;
      QVERIFY2(i < before_new, "progress of the superseded job after the new one started");
    }
    for (qsizetype i = 1; i < progress.count(); ++i) {
      // Once the new job reports, the old one never does again.
      if (progress.at(i - 1).at(0).toULongLong() == new_job) {
        QCOMPARE(progress.at(i).at(0).toULongLong(), new_job);
      }
    }
  }

  void a_deployment_that_does_not_fit_fails_with_the_reason() {
    SimulationRunner runner;
    QSignalSpy failed(&runner, &SimulationRunner::failed);
    QSignalSpy finished(&runner, &SimulationRunner::finished);
    const uint64_t job = runner.start(quickstart({"model=Llama-2-70B"}));
    QTRY_COMPARE_WITH_TIMEOUT(failed.count(), 1, 20000);
    QCOMPARE(failed.at(0).at(0).toULongLong(), job);
    const QString message = failed.at(0).at(1).toString();
    QVERIFY(!message.isEmpty());
    QVERIFY(!message.contains('\n'));
    QCOMPARE(finished.count(), 0);
    QVERIFY(!runner.busy());
    // The runner stays usable.
    runner.start(short_run());
    QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 20000);
  }

  void destroying_the_runner_stops_its_jobs() {
    QElapsedTimer timer;
    timer.start();
    {
      SimulationRunner runner;
      QSignalSpy progress(&runner, &SimulationRunner::progress);
      runner.start(long_run());
      QTRY_VERIFY_WITH_TIMEOUT(progress.count() >= 1, 20000);
    }
    QVERIFY(timer.elapsed() < 25000);
  }
};

SERVESIM_GUI_TEST(SimulationRunnerTest);

}  // namespace servesim::gui

#include "simulation_runner_test.moc"
