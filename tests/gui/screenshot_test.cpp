// Renders every view of a real result — with a sweep on the Trade-offs tab and a second
// scenario on the Compare tab — the Agents tab of two agent scenarios, the Memory view of a
// pipeline-parallel deployment, and the editor flagging a bad value, to PNG, and checks that each
// is not blank. The PNGs go to $SERVESIM_SCREENSHOT_DIR (ctest: the build tree); docs/images/ holds
// copies made this way.
#include <QDir>
#include <QFile>
#include <QImage>
#include <QScrollArea>
#include <QScrollBar>
#include <QSet>
#include <QSignalSpy>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QTest>

#include "gui/compare_controller.h"
#include "gui/main_window.h"
#include "gui/scenario_document.h"
#include "gui/scenario_editor.h"
#include "gui/service_edit.h"
#include "gui/simulation_runner.h"
#include "gui/sweep_runner.h"
#include "gui/tradeoff_controller.h"
#include "gui/tradeoff_view.h"
#include "gui_test_registry.h"

namespace servesim::gui {
namespace {

QString screenshot_dir() {
  const QString dir = qEnvironmentVariable("SERVESIM_SCREENSHOT_DIR", QDir::tempPath());
  QDir().mkpath(dir);
  return dir;
}

// Not blank: many colours, and a fair share of pixels unlike the most common (background) one.
void verify_not_blank(const QImage& image, const QString& what, bool expect_colour) {
  QVERIFY2(!image.isNull() && image.width() > 200 && image.height() > 150, qPrintable(what));
  QHash<QRgb, int> counts;
  int coloured = 0;
  for (int y = 0; y < image.height(); y += 2) {
    for (int x = 0; x < image.width(); x += 2) {
      const QColor c = image.pixelColor(x, y);
      ++counts[c.rgb()];
      if (c.hsvSaturation() > 80 && c.value() > 60) ++coloured;
    }
  }
  int background = 0;
  for (int n : counts) background = std::max(background, n);
  const int total = ((image.width() + 1) / 2) * ((image.height() + 1) / 2);
  QVERIFY2(counts.size() > 32, qPrintable(what + ": too few colours"));
  QVERIFY2(total - background > total / 50, qPrintable(what + ": nearly all background"));
  // Charts draw coloured series; a view without them has not been drawn.
  if (expect_colour) QVERIFY2(coloured > total / 500, qPrintable(what + ": no coloured series"));
}

}  // namespace

class ScreenshotTest : public QObject {
  Q_OBJECT

 private slots:
  void every_view_of_a_real_result() {
    MainWindow w;
    w.resize(1500, 900);
    w.show();
    QVERIFY(w.open_template(test::scenario_path("quickstart.json")));
    // Enough load on a small KV cache that queues form and sequences get preempted, so
    // every timeline chart has something to show.
    w.document()->set_value("workload.num_requests", nlohmann::json(800));
    w.document()->set_value("workload.arrival.rate_qps", nlohmann::json(16));
    w.document()->set_value("engine.gpu_memory_utilization", nlohmann::json(0.3));
    QSignalSpy finished(w.runner(), &SimulationRunner::finished);
    QVERIFY(w.run());
    QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 30000);

    // Compare: this run beside the same deployment at half the load, run from a file.
    QVERIFY(w.compare()->add_shown_result());
    QTemporaryDir dir;
    nlohmann::json half = *w.document()->json();
    half["name"] = "quickstart at 8 req/s";
    half["workload"]["arrival"]["rate_qps"] = 8;
    const QString half_path = dir.filePath("half.json");
    QFile half_file(half_path);
    QVERIFY(half_file.open(QIODevice::WriteOnly));
    half_file.write(QByteArray::fromStdString(half.dump(2)));
    half_file.close();
    QSignalSpy compared(w.compare()->runner(), &SimulationRunner::finished);
    QVERIFY(w.compare()->compare_files({half_path}));
    QTRY_COMPARE_WITH_TIMEOUT(compared.count(), 1, 30000);

    // Trade-offs: max_num_seqs from starved to generous on the same load.
    w.tradeoffs()->view()->set_knob("engine.max_num_seqs", "4,8,16,32,64,128");
    QSignalSpy swept(w.tradeoffs()->runner(), &SweepRunner::finished);
    QVERIFY(w.tradeoffs()->run_sweep());
    QTRY_COMPARE_WITH_TIMEOUT(swept.count(), 1, 60000);

    // The Agents tab of a run without agent sessions is a one-line note: its own test below.
    const char* names[] = {"summary",    "memory",    "timeline", "latency",
                           "where-time", "tradeoffs", "compare"};
    static_assert(sizeof names / sizeof names[0] == MainWindow::kAgentsTab);
    for (int tab = 0; tab < MainWindow::kAgentsTab; ++tab) {
      w.tabs()->setCurrentIndex(tab);
      QCoreApplication::processEvents();
      const QImage page = w.tabs()->currentWidget()->grab().toImage();
      verify_not_blank(page, names[tab], tab != MainWindow::kSummaryTab);
      const QString path = screenshot_dir() + "/gui-" + names[tab] + ".png";
      QVERIFY(w.grab().save(path));
      verify_not_blank(QImage(path), path, tab != MainWindow::kSummaryTab);
    }
  }

  // The RAG service: its diagnosis beside the Summary, its time by segment, its Service box.
  void a_service_path_and_its_diagnosis() {
    MainWindow w;
    w.resize(1500, 900);
    w.show();
    QVERIFY(w.open_template(test::scenario_path("service-rag.json")));
    w.document()->set_value("workload.num_requests", nlohmann::json(600));
    QSignalSpy finished(w.runner(), &SimulationRunner::finished);
    QVERIFY(w.run());
    QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 30000);
    const std::pair<MainWindow::Tab, const char*> shots[] = {
        {MainWindow::kSummaryTab, "gui-diagnosis.png"},
        {MainWindow::kWhereTimeTab, "gui-where-time-rag.png"}};
    for (const auto& [tab, name] : shots) {
      w.tabs()->setCurrentIndex(tab);
      QCoreApplication::processEvents();
      const QString path = screenshot_dir() + "/" + name;
      QVERIFY(w.grab().save(path));
      verify_not_blank(QImage(path), path, tab != MainWindow::kSummaryTab);
    }
    // The Service box, scrolled into view in the form.
    auto* form = w.editor()->findChild<QScrollArea*>();
    QVERIFY(form);
    form->ensureWidgetVisible(w.editor()->service_edit(), 0, 0);
    form->horizontalScrollBar()->setValue(0);  // the labels, not the fields' right edge
    QCoreApplication::processEvents();
    const QString path = screenshot_dir() + "/gui-service-form.png";
    QVERIFY(w.grab().save(path));
    verify_not_blank(QImage(path), path, true);
  }

  // The multi-agent scenario's sub-agents in parallel beside the serial variant as baseline.
  void the_agents_tab_of_two_variants() {
    MainWindow w;
    w.resize(1500, 900);
    w.show();
    for (const char* scenario : {"agent-multi-serial.json", "agent-multi-parallel.json"}) {
      QVERIFY(w.open_template(test::scenario_path(scenario)));
      w.document()->set_value("workload.agent.sessions", nlohmann::json(20));
      QSignalSpy finished(w.runner(), &SimulationRunner::finished);
      QVERIFY(w.run());
      QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 60000);
    }
    w.tabs()->setCurrentIndex(MainWindow::kAgentsTab);
    QCoreApplication::processEvents();
    const QString path = screenshot_dir() + "/gui-agents.png";
    QVERIFY(w.grab().save(path));
    verify_not_blank(QImage(path), path, true);
  }

  void memory_per_pipeline_stage() {
    MainWindow w;
    w.resize(1500, 900);
    w.show();
    QVERIFY(w.open_template(test::scenario_path("quickstart.json")));
    w.document()->set_value("model", nlohmann::json("Llama-2-13B"));
    w.document()->set_value("parallel.pipeline_parallel_size", nlohmann::json(4));
    QVERIFY2(w.document()->error().isEmpty(), qPrintable(w.document()->error()));
    w.tabs()->setCurrentIndex(MainWindow::kMemoryTab);
    QCoreApplication::processEvents();
    const QString path = screenshot_dir() + "/gui-memory-pp.png";
    QVERIFY(w.grab().save(path));
    verify_not_blank(QImage(path), path, true);
  }

  void the_editor_flagging_a_bad_value() {
    MainWindow w;
    w.resize(1500, 900);
    w.show();
    QVERIFY(w.open_template(test::scenario_path("quickstart.json")));
    w.document()->set_value("parallel.tensor_parallel_size", nlohmann::json(3));
    QVERIFY(!w.document()->error().isEmpty());
    w.tabs()->setCurrentIndex(MainWindow::kMemoryTab);
    QCoreApplication::processEvents();
    const QString path = screenshot_dir() + "/gui-validation.png";
    QVERIFY(w.grab().save(path));
    verify_not_blank(QImage(path), path, false);  // no plan to chart: the scenario is invalid
  }
};

SERVESIM_GUI_TEST(ScreenshotTest);

}  // namespace servesim::gui

#include "screenshot_test.moc"
