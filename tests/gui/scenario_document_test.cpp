// ScenarioDocument: opening, validating, editing single keys and saving scenario files.
#include "gui/scenario_document.h"

#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

#include "gui_test_registry.h"

namespace servesim::gui {

class ScenarioDocumentTest : public QObject {
  Q_OBJECT

 private slots:
  void opens_a_bundled_scenario() {
    ScenarioDocument doc;
    QString error;
    QVERIFY(doc.load(test::scenario_path("quickstart.json"), &error));
    QVERIFY2(doc.error().isEmpty(), qPrintable(doc.error()));
    QVERIFY(doc.scenario().has_value());
    QCOMPARE(doc.scenario()->config.model.name, std::string("Llama-2-7B"));
    QVERIFY(!doc.modified());
  }

  void keeps_text_that_is_not_json_and_names_the_line() {
    QTemporaryDir dir;
    const QString path = dir.filePath("broken.json");
    const QByteArray broken = "{\n  \"model\": \"Llama-2-7B\",\n  \"gpu\": \n}\n";
    QFile file(path);
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.write(broken);
    file.close();

    ScenarioDocument doc;
    QString error;
    QVERIFY(doc.load(path, &error));
    QCOMPARE(doc.text(), QString::fromUtf8(broken));
    QVERIFY(!doc.scenario().has_value());
    QVERIFY(!doc.is_json_object());
    QVERIFY(doc.error().startsWith("not valid JSON"));
    QCOMPARE(doc.error_line(), 4);
    QVERIFY(!doc.error().contains('\n'));
  }

  void reports_the_config_error_of_an_invalid_value() {
    ScenarioDocument doc;
    QString error;
    QVERIFY(doc.load(test::scenario_path("quickstart.json"), &error));
    QSignalSpy changed(&doc, &ScenarioDocument::changed);
    doc.set_value("engine.max_num_seqs", nlohmann::json(-1));
    QCOMPARE(changed.count(), 1);
    QVERIFY(doc.modified());
    QVERIFY(!doc.scenario().has_value());
    QVERIFY2(doc.error().contains("max_num_seqs must be > 0"), qPrintable(doc.error()));
    QCOMPARE(doc.error_line(), 0);

    doc.set_value("engine.max_num_sqs", nlohmann::json(3));
    doc.set_value("engine.max_num_seqs", std::nullopt);
    QVERIFY2(doc.error().contains("did you mean 'max_num_seqs'"), qPrintable(doc.error()));

    doc.set_value("engine.max_num_sqs", std::nullopt);
    QVERIFY2(doc.error().isEmpty(), qPrintable(doc.error()));
    doc.set_value("parallel.tensor_parallel_size", nlohmann::json(3));
    QVERIFY2(doc.error().contains("does not divide the 32 attention heads"),
             qPrintable(doc.error()));
    doc.set_value("parallel.tensor_parallel_size", std::nullopt);
    doc.set_value("engine.gpu_memory_utilization", nlohmann::json(1.5));
    QVERIFY2(doc.error().contains("gpu-memory-utilization"), qPrintable(doc.error()));
    doc.set_value("engine.gpu_memory_utilization", std::nullopt);
    QVERIFY2(doc.error().isEmpty(), qPrintable(doc.error()));
    doc.set_value("model", nlohmann::json("Llama-9"));
    QVERIFY2(doc.error().contains("unknown model 'Llama-9'"), qPrintable(doc.error()));
  }

  void set_value_keeps_key_order_and_creates_objects() {
    ScenarioDocument doc;
    doc.set_text(R"({"name": "x", "model": "Llama-2-7B", "gpu": "A100-80GB"})");
    doc.set_value("parallel.tensor_parallel_size", nlohmann::json(2));
    const QString text = doc.text();
    QVERIFY(text.indexOf("\"name\"") < text.indexOf("\"model\""));
    QVERIFY(text.indexOf("\"gpu\"") < text.indexOf("\"parallel\""));
    QCOMPARE(doc.value("parallel.tensor_parallel_size")->get<int>(), 2);
    QVERIFY(!doc.value("engine.max_num_seqs").has_value());
    // The scenario still lacks a workload: the error says so.
    QVERIFY2(doc.error().contains("workload"), qPrintable(doc.error()));
  }

  void save_and_load_round_trip() {
    QTemporaryDir dir;
    ScenarioDocument doc;
    QString error;
    QVERIFY(doc.load_template(test::scenario_path("quickstart.json"), &error));
    QVERIFY(doc.path().isEmpty());
    QVERIFY(doc.scenario().has_value());
    doc.set_value("engine.max_num_seqs", nlohmann::json(48));
    doc.set_value("workload.arrival.rate_qps", nlohmann::json(3.5));
    const QString path = dir.filePath("mine.json");
    QVERIFY2(doc.save(path, &error), qPrintable(error));
    QVERIFY(!doc.modified());
    QCOMPARE(doc.path(), QFileInfo(path).absoluteFilePath());

    ScenarioDocument again;
    QVERIFY(again.load(path, &error));
    QCOMPARE(again.text(), doc.text());
    QVERIFY(again.scenario().has_value());
    QCOMPARE(again.scenario()->config.engine.max_num_seqs, 48);
    QCOMPARE(again.value("workload.arrival.rate_qps")->get<double>(), 3.5);
  }

  void unreadable_file_leaves_the_document_alone() {
    ScenarioDocument doc;
    doc.set_text("{}");
    QString error;
    QVERIFY(!doc.load("/nonexistent/scenario.json", &error));
    QVERIFY(error.contains("cannot open"));
    QCOMPARE(doc.text(), QString("{}"));
  }
};

SERVESIM_GUI_TEST(ScenarioDocumentTest);

}  // namespace servesim::gui

#include "scenario_document_test.moc"
