// MainWindow driven as a user would: open, edit through the form and the JSON, run from the
// Run action, see failures in place, save, export, remember recent files.
#include "gui/main_window.h"

#include <QAction>
#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFile>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QSettings>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTemporaryDir>
#include <QTest>

#include "gui/error_style.h"
#include "gui/latency_cdf_model.h"
#include "gui/memory_plan_model.h"
#include "gui/scenario_document.h"
#include "gui/scenario_editor.h"
#include "gui/simulation_runner.h"
#include "gui/summary_model.h"
#include "gui/timeline_model.h"
#include "gui_test_registry.h"

namespace servesim::gui {
namespace {

// The window with the bundled quickstart, cut to a fast run.
void open_small_quickstart(MainWindow& w) {
  QVERIFY(w.open_template(test::scenario_path("quickstart.json")));
  w.document()->set_value("workload.num_requests", nlohmann::json(150));
  QVERIFY2(w.document()->error().isEmpty(), qPrintable(w.document()->error()));
}

QAction* action(MainWindow& w, const char* name) {
  return w.findChild<QAction*>(QString::fromLatin1(name));
}

}  // namespace

class MainWindowTest : public QObject {
  Q_OBJECT

 private slots:
  void a_run_started_from_the_ui_fills_the_views() {
    MainWindow w;
    open_small_quickstart(w);
    QSignalSpy finished(w.runner(), &SimulationRunner::finished);
    QAction* run = action(w, "run_action");
    QVERIFY(run && run->isEnabled());
    run->trigger();
    QVERIFY(w.runner()->busy());
    QVERIFY(action(w, "cancel_action")->isEnabled());
    QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 20000);
    QVERIFY(w.shown_result() != nullptr);
    QVERIFY(w.summary_model()->rowCount() > 20);
    QVERIFY(w.timeline_model()->rowCount() > 10);
    QCOMPARE(w.latency_model()->rowCount(), 201);
    QVERIFY(w.banner_text().contains("150 requests completed"));
    QVERIFY(!action(w, "cancel_action")->isEnabled());
    QVERIFY(w.progress_bar()->isHidden());
  }

  void cancel_from_the_ui_keeps_the_previous_result() {
    MainWindow w;
    open_small_quickstart(w);
    QSignalSpy finished(w.runner(), &SimulationRunner::finished);
    QVERIFY(w.run());
    QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 20000);
    const auto first = w.shown_result();

    w.document()->set_value("workload.num_requests", nlohmann::json(5000000));
    QSignalSpy cancelled(w.runner(), &SimulationRunner::cancelled);
    QSignalSpy progress(w.runner(), &SimulationRunner::progress);
    QVERIFY(w.run());
    QTRY_VERIFY_WITH_TIMEOUT(progress.count() >= 1, 20000);
    action(w, "cancel_action")->trigger();
    QTRY_COMPARE_WITH_TIMEOUT(cancelled.count(), 1, 10000);
    QCOMPARE(w.shown_result(), first);
    QCOMPARE(finished.count(), 1);
  }

  void a_newer_run_supersedes_an_older_one() {
    MainWindow w;
    open_small_quickstart(w);
    w.document()->set_value("workload.num_requests", nlohmann::json(5000000));
    QSignalSpy finished(w.runner(), &SimulationRunner::finished);
    QSignalSpy progress(w.runner(), &SimulationRunner::progress);
    QVERIFY(w.run());
    QTRY_VERIFY_WITH_TIMEOUT(progress.count() >= 1, 20000);
    w.document()->set_value("workload.num_requests", nlohmann::json(120));
    QVERIFY(w.run());
    QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 20000);
    w.runner()->wait_for_all();
    QCoreApplication::processEvents();
    QCOMPARE(finished.count(), 1);
    QCOMPARE(w.shown_result()->job, uint64_t{2});
    QCOMPARE(w.shown_result()->result.summary.completed, uint64_t{120});
  }

  void a_failed_run_says_why_and_the_window_stays_usable() {
    MainWindow w;
    open_small_quickstart(w);
    w.document()->set_value("model", nlohmann::json("Llama-2-70B"));  // 140 GB on one GPU
    QVERIFY(w.document()->scenario().has_value());
    QVERIFY(!w.memory_model()->plan()->fits());
    QVERIFY(w.memory_model()->problem().contains("tensor-parallel-size"));  // with the fix
    QSignalSpy failed(w.runner(), &SimulationRunner::failed);
    QVERIFY(w.run());
    QTRY_COMPARE_WITH_TIMEOUT(failed.count(), 1, 20000);
    QVERIFY2(w.banner_text().contains("failed"), qPrintable(w.banner_text()));
    QVERIFY(w.banner_text().contains(failed.at(0).at(1).toString()));

    QSignalSpy finished(w.runner(), &SimulationRunner::finished);
    w.document()->set_value("parallel.tensor_parallel_size", nlohmann::json(4));
    QVERIFY(w.memory_model()->plan()->fits());
    QVERIFY(w.memory_model()->problem().isEmpty());
    QVERIFY(w.run());
    QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 30000);
  }

  void invalid_values_are_flagged_in_place_before_running() {
    MainWindow w;
    open_small_quickstart(w);
    ScenarioEditor* editor = w.editor();
    auto* seqs = qobject_cast<QSpinBox*>(editor->field("engine.max_num_seqs"));
    QVERIFY(seqs);
    QString text = w.document()->text();
    text.replace("\"max_model_len\": 4096", "\"max_model_len\": 4096, \"max_num_seqs\": -3");
    editor->text_edit()->setPlainText(text);  // typed into the JSON
    QVERIFY(!w.document()->scenario().has_value());
    QCOMPARE(editor->invalid_fields(), QStringList{"engine.max_num_seqs"});
    QCOMPARE(seqs->styleSheet(), invalid_field_style());  // the GUI's one error style
    QVERIFY(invalid_field_style().contains(error_color().name()));
    QVERIFY(seqs->toolTip().contains("max_num_seqs must be > 0"));
    QVERIFY(editor->error_text().contains("max_num_seqs must be > 0"));
    QVERIFY(!action(w, "run_action")->isEnabled());
    QVERIFY(!w.run());
    QVERIFY(w.banner_text().startsWith("Cannot run"));

    seqs->setValue(64);  // fixed through the form
    QVERIFY2(w.document()->error().isEmpty(), qPrintable(w.document()->error()));
    QVERIFY(editor->invalid_fields().isEmpty());
    QVERIFY(seqs->styleSheet().isEmpty());
    QCOMPARE(w.document()->value("engine.max_num_seqs")->get<int>(), 64);
    QVERIFY(editor->text_edit()->toPlainText().contains("\"max_num_seqs\": 64"));
    QVERIFY(action(w, "run_action")->isEnabled());

    auto* tp = qobject_cast<QSpinBox*>(editor->field("parallel.tensor_parallel_size"));
    tp->setValue(3);  // 32 heads: caught while editing, not at run time
    QCOMPARE(editor->invalid_fields(), QStringList{"parallel.tensor_parallel_size"});
    QVERIFY(!action(w, "run_action")->isEnabled());
    tp->setValue(2);
    QVERIFY(editor->invalid_fields().isEmpty());

    editor->text_edit()->setPlainText("{ \"model\": ");  // not JSON: fields off, text kept
    QVERIFY(!editor->field("model")->isEnabled());
    QCOMPARE(w.document()->text(), QString("{ \"model\": "));
    QVERIFY(editor->error_text().startsWith("not valid JSON"));
  }

  void the_memory_view_follows_every_knob() {
    MainWindow w;
    open_small_quickstart(w);
    QVERIFY(w.memory_model()->plan().has_value());
    const int64_t kv_before = w.memory_model()->plan()->kv_cache_bytes;
    auto* utilization =
        qobject_cast<QDoubleSpinBox*>(w.editor()->field("engine.gpu_memory_utilization"));
    utilization->setValue(0.5);
    QCOMPARE(w.document()->value("engine.gpu_memory_utilization")->get<double>(), 0.5);
    QVERIFY(w.memory_model()->plan()->kv_cache_bytes < kv_before);
    QVERIFY(!w.runner()->busy());  // no simulation involved

    auto* tp = qobject_cast<QSpinBox*>(w.editor()->field("parallel.tensor_parallel_size"));
    tp->setValue(2);
    QCOMPARE(w.memory_model()->plan()->parallel.tp, 2);
    auto* offload =
        qobject_cast<QDoubleSpinBox*>(w.editor()->field("engine.kv_offloading_size_gib"));
    QCOMPARE(offload->text(), QString("none"));
    offload->setValue(64);
    QCOMPARE(w.document()->value("engine.kv_offloading_size_gib")->get<double>(), 64.0);
    QVERIFY(w.memory_model()->plan()->num_host_kv_blocks > 0);
    offload->setValue(0);
    QVERIFY(!w.document()->value("engine.kv_offloading_size_gib"));
    QCOMPARE(w.memory_model()->plan()->num_host_kv_blocks, int64_t{0});

    auto* prefix = qobject_cast<QCheckBox*>(w.editor()->field("engine.enable_prefix_caching"));
    prefix->setChecked(false);
    QCOMPARE(w.document()->value("engine.enable_prefix_caching")->get<bool>(), false);

    auto* async = qobject_cast<QCheckBox*>(w.editor()->field("engine.async_scheduling"));
    QVERIFY(!async->isChecked());  // absent: off
    async->setChecked(true);
    QVERIFY(w.document()->scenario()->config.engine.async_scheduling);

    // CUDA graphs: the release's default until a mode is chosen; choosing it back removes the key.
    auto* graphs = qobject_cast<QComboBox*>(w.editor()->field("engine.cudagraph_mode"));
    QCOMPARE(graphs->currentText(), QString("release default"));
    const int64_t default_kv = w.memory_model()->plan()->kv_cache_tokens;
    graphs->setCurrentText("FULL_DECODE_ONLY");
    QCOMPARE(w.document()->value("engine.cudagraph_mode")->get<std::string>(),
             std::string("FULL_DECODE_ONLY"));
    QVERIFY(w.memory_model()->plan()->kv_cache_tokens > default_kv);  // fewer graphs to hold
    graphs->setCurrentText("release default");
    QVERIFY(!w.document()->value("engine.cudagraph_mode").has_value());

    w.document()->set_value("parallel.tensor_parallel_size", nlohmann::json(4));
    QCOMPARE(tp->value(), 4);  // the JSON drives the form too

    auto* e2e = qobject_cast<QDoubleSpinBox*>(w.editor()->field("slo.e2e_s"));
    QCOMPARE(e2e->text(), QString("none"));
    e2e->setValue(2.5);
    QCOMPARE(w.document()->scenario()->config.metrics.slo.e2e_s, std::optional<double>(2.5));
    e2e->setValue(0.0);  // "none" removes the key
    QVERIFY(!w.document()->value("slo.e2e_s").has_value());
    QCOMPARE(qobject_cast<QDoubleSpinBox*>(w.editor()->field("slo.ttft_s"))->value(), 0.5);
  }

  void the_memory_view_shows_each_pipeline_stage() {
    MainWindow w;
    open_small_quickstart(w);
    QCOMPARE(w.memory_model()->stage_count(), 0);
    auto* pp = qobject_cast<QSpinBox*>(w.editor()->field("parallel.pipeline_parallel_size"));
    pp->setValue(2);
    QCOMPARE(w.memory_model()->stage_count(), 2);
    QCOMPARE(w.memory_model()->columnCount(), int(MemoryPlanModel::kColumnCount) + 2);
    QCOMPARE(w.memory_model()->plan()->stages.size(), size_t{2});
    pp->setValue(1);
    QCOMPARE(w.memory_model()->stage_count(), 0);
  }

  void broken_file_opens_with_its_errors_and_text() {
    QTemporaryDir dir;
    const QString path = dir.filePath("typo.json");
    QFile file(path);
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.write(
        "{\"model\": \"Llama-2-7B\", \"gpu\": \"A100-80GB\", \"workload\": {},\n"
        " \"engine\": {\"max_num_sqs\": 8}}\n");
    file.close();
    MainWindow w;
    QVERIFY(w.open_file(path));
    QVERIFY(w.editor()->error_text().contains("max_num_sqs"));
    QVERIFY(w.editor()->text_edit()->toPlainText().contains("max_num_sqs"));
  }

  void save_remember_export_and_cli_command() {
    QTemporaryDir dir;
    MainWindow w;
    open_small_quickstart(w);
    const QString path = dir.filePath("saved.json");
    QVERIFY(w.save_to(path));
    QVERIFY(!w.document()->modified());
    QCOMPARE(QSettings().value("files/recent").toStringList().value(0), path);
    QCOMPARE(w.cli_command(), "servesim simulate " + path);

    QSignalSpy finished(w.runner(), &SimulationRunner::finished);
    QVERIFY(w.run());
    QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 20000);
    const QString csv = dir.filePath("timeline.csv");
    QVERIFY(w.export_csv(MainWindow::kTimelineTab, csv));
    QFile exported(csv);
    QVERIFY(exported.open(QIODevice::ReadOnly));
    QVERIFY(exported.readLine().startsWith("time_s,running,waiting"));
    const QString png = dir.filePath("latency.png");
    QVERIFY(w.export_png(MainWindow::kLatencyTab, png));
    QVERIFY(QImage(png).width() > 100);
  }
};

SERVESIM_GUI_TEST(MainWindowTest);

}  // namespace servesim::gui

#include "main_window_test.moc"
