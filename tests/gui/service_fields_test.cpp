// The Service group of the scenario form: "none" vs the default vLLM API server vs a path of
// its own; its fields write the JSON the CLI reads (checked through parse_scenario's own
// ServiceSpec) and keep every key they do not edit across load, edit and save; bad values
// are flagged in place. Also the Model and GPU fields: the catalog's names, or a file.
#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QSpinBox>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTest>

#include "gui/scenario_document.h"
#include "gui/scenario_editor.h"
#include "gui/service_edit.h"
#include "gui_test_registry.h"

namespace servesim::gui {
namespace {

template <typename Box>
Box* service_field(ScenarioEditor& editor, const char* key) {
  return qobject_cast<Box*>(editor.service_edit()->field(QString::fromLatin1(key)));
}

}  // namespace

class ServiceFieldsTest : public QObject {
  Q_OBJECT

 private slots:
  void init() { document_ = std::make_unique<ScenarioDocument>(); }
  void cleanup() {
    editor_.reset();
    document_.reset();
  }

  void no_block_is_vllms_api_server_and_none_is_the_engine_only() {
    open("quickstart.json");
    QVERIFY(!document_->value("service"));
    ServiceEdit* service = editor_->service_edit();
    QCOMPARE(service->mode(), ServiceEdit::kDefaultFrontend);
    QCOMPARE(service->mode_box()->currentText(),
             QString("served through vLLM's API server (default)"));
    QVERIFY(!service->field("service.gateway.workers")->isEnabled());

    document_->set_value("service", nlohmann::json("none"));
    QCOMPARE(service->mode_box()->currentIndex(), int(ServiceEdit::kEngineOnly));
    QVERIFY(service->mode_box()->currentText().startsWith("engine only"));
    QVERIFY(!document_->scenario()->config.service.enabled);

    choose_mode(ServiceEdit::kCustom);
    QCOMPARE(document_->value("service")->dump(), std::string("{}"));
    QVERIFY(document_->scenario()->config.service.enabled);
    QVERIFY(service->field("service.frontend.workers")->isEnabled());
    QVERIFY(!service->field("service.gateway.workers")->isEnabled());  // no gateway yet

    choose_mode(ServiceEdit::kDefaultFrontend);
    QVERIFY(!document_->value("service"));
    choose_mode(ServiceEdit::kEngineOnly);
    QCOMPARE(document_->value("service")->get<std::string>(), std::string("none"));
  }

  void edits_keep_every_other_key_through_save_and_load() {
    open("service-rag.json");
    nlohmann::json expected = *document_->json();
    QCOMPARE(editor_->service_edit()->mode(), ServiceEdit::kCustom);
    QCOMPARE(service_field<QSpinBox>(*editor_, "service.gateway.workers")->value(), 4);
    QCOMPARE(service_field<QDoubleSpinBox>(*editor_, "service.network.rtt_s")->value(), 40.0);
    QCOMPARE(service_field<QDoubleSpinBox>(*editor_, "service.network.rtt_s:std")->value(), 10.0);

    service_field<QSpinBox>(*editor_, "service.gateway.workers")->setValue(6);
    expected["service"]["gateway"]["workers"] = 6;
    service_field<QDoubleSpinBox>(*editor_, "service.frontend.per_output_token_s")->setValue(40);
    expected["service"]["frontend"]["per_output_token_s"] = 40e-6;
    service_field<QDoubleSpinBox>(*editor_, "service.frontend.request_s")->setValue(3);
    expected["service"]["frontend"]["request_s"] = 0.003;
    QTableWidget* stages = editor_->service_edit()->stages_table();
    QCOMPARE(stages->rowCount(), 3);
    QCOMPARE(stages->item(1, 0)->text(), QString("rerank"));
    QCOMPARE(stages->item(1, 2)->data(Qt::EditRole).toDouble(), 120.0);
    stages->item(1, 1)->setData(Qt::EditRole, 3);
    expected["service"]["stages"][1]["workers"] = 3;
    QVERIFY2(document_->error().isEmpty(), qPrintable(document_->error()));

    QTemporaryDir dir;
    const QString path = dir.filePath("rag.json");
    QVERIFY(document_->save(path, nullptr));
    ScenarioDocument reloaded;
    QVERIFY(reloaded.load(path, nullptr));
    QVERIFY2(reloaded.error().isEmpty(), qPrintable(reloaded.error()));
    QCOMPARE(reloaded.json()->dump(), expected.dump());
    // What the CLI reads from it.
    const ServiceSpec& spec = reloaded.scenario()->config.service;
    QCOMPARE(spec.gateway->workers, 6);
    QCOMPARE(spec.frontend.per_output_token_s, 40e-6);
    QCOMPARE(spec.stages.at(1).workers, 3);
    QCOMPARE(spec.stages.at(1).name, std::string("rerank"));
  }

  void gateway_rate_limit_and_times_write_the_schema() {
    open("quickstart.json");
    choose_mode(ServiceEdit::kCustom);
    service_field<QCheckBox>(*editor_, "service.gateway")->setChecked(true);
    QCOMPARE(document_->value("service.gateway")->dump(), std::string(R"({"workers":1})"));
    auto* rate =
        service_field<QDoubleSpinBox>(*editor_, "service.gateway.rate_limit.requests_per_s");
    QVERIFY(rate->isEnabled());
    rate->setValue(10);
    service_field<QDoubleSpinBox>(*editor_, "service.gateway.request_s")->setValue(20);
    service_field<QDoubleSpinBox>(*editor_, "service.gateway.request_s:std")->setValue(5);
    QCOMPARE(document_->value("service.gateway.request_s")->dump(),
             std::string(R"({"mean":0.02,"std":0.005,"type":"lognormal"})"));
    QVERIFY2(document_->error().isEmpty(), qPrintable(document_->error()));
    const ServiceSpec& spec = document_->scenario()->config.service;
    QCOMPARE(spec.rate_limit->requests_per_s, 10.0);
    QCOMPARE(spec.gateway->request_s.mean(), 0.02);

    service_field<QDoubleSpinBox>(*editor_, "service.gateway.request_s:std")->setValue(0);
    QCOMPARE(document_->value("service.gateway.request_s")->get<double>(), 0.02);
    rate->setValue(0);  // no limit left: the whole rate_limit goes, the gateway stays
    QVERIFY(!document_->value("service.gateway.rate_limit"));
    QVERIFY(document_->value("service.gateway"));
    service_field<QCheckBox>(*editor_, "service.gateway")->setChecked(false);
    QVERIFY(!document_->value("service.gateway"));
    QVERIFY2(document_->error().isEmpty(), qPrintable(document_->error()));
  }

  void retries_stages_and_a_bad_value_in_place() {
    open("quickstart.json");
    choose_mode(ServiceEdit::kCustom);
    auto* attempts = service_field<QSpinBox>(*editor_, "service.client.retry.max_attempts");
    attempts->setValue(3);
    QCOMPARE(document_->value("service.client.retry")->dump(),
             std::string(R"({"initial_backoff_s":0.5,"max_attempts":3})"));
    QVERIFY2(document_->error().isEmpty(), qPrintable(document_->error()));
    QCOMPARE(document_->scenario()->config.service.client.retry.max_attempts, 3);
    attempts->setValue(1);
    QVERIFY(!document_->value("service.client"));

    // The load generator's CPU: threads write service.client.machine; "ideal" (0) removes it
    // and the client block it leaves empty.
    auto* threads = service_field<QSpinBox>(*editor_, "service.client.machine.threads");
    QCOMPARE(threads->value(), 0);
    threads->setValue(4);
    QVERIFY2(document_->error().isEmpty(), qPrintable(document_->error()));
    QVERIFY(document_->scenario()->config.service.client.machine.has_value());
    QCOMPARE(document_->scenario()->config.service.client.machine->threads, 4);
    threads->setValue(0);
    QVERIFY(!document_->value("service.client"));
    QVERIFY(!document_->scenario()->config.service.client.machine.has_value());

    editor_->service_edit()->add_stage();
    editor_->service_edit()->add_stage();
    QCOMPARE(editor_->service_edit()->stages_table()->rowCount(), 2);
    QVERIFY2(document_->error().isEmpty(), qPrintable(document_->error()));
    QCOMPARE(document_->scenario()->config.service.stages.size(), size_t(2));
    editor_->service_edit()->remove_stage(0);
    QCOMPARE(document_->value("service.stages")->at(0)["name"].get<std::string>(),
             std::string("stage2"));
    editor_->service_edit()->remove_stage(0);
    QVERIFY(!document_->value("service.stages"));

    document_->set_value("service.gateway", nlohmann::json{{"workers", 0}});
    QVERIFY(!document_->scenario());
    QCOMPARE(editor_->service_edit()->invalid_fields(), QStringList{"service.gateway.workers"});
    QVERIFY(editor_->service_edit()
                ->field("service.gateway.workers")
                ->toolTip()
                .contains("workers must be >= 1"));
    service_field<QSpinBox>(*editor_, "service.gateway.workers")->setValue(2);
    QVERIFY(editor_->service_edit()->invalid_fields().isEmpty());
  }

  void model_and_gpu_list_the_catalog_and_take_a_file() {
    open("quickstart.json");
    auto* model = qobject_cast<QComboBox*>(editor_->field("model"));
    auto* gpu = qobject_cast<QComboBox*>(editor_->field("gpu"));
    QVERIFY(model && model->isEditable() && gpu && gpu->isEditable());
    QCOMPARE(model->count(), int(document_->catalog().models().size()));
    for (const ModelSpec& m : document_->catalog().models()) {
      QVERIFY2(model->findText(QString::fromStdString(m.name)) >= 0, m.name.c_str());
    }
    QCOMPARE(gpu->count(), int(document_->catalog().gpus().size()));
    for (const HardwareSpec& g : document_->catalog().gpus()) {
      QVERIFY2(gpu->findText(QString::fromStdString(g.name)) >= 0, g.name.c_str());
    }
    model->setCurrentIndex(model->findText("Llama-2-7B"));
    QCOMPARE(document_->value("model")->get<std::string>(), std::string("Llama-2-7B"));
    const QString file = QStringLiteral(SERVESIM_SOURCE_DIR "/configs/models/Llama-2-7B.json");
    model->setEditText(file);
    QCOMPARE(document_->value("model")->get<std::string>(), file.toStdString());
    QVERIFY2(document_->error().isEmpty(), qPrintable(document_->error()));
    QCOMPARE(document_->scenario()->config.model.name, std::string("Llama-2-7B"));
  }

 private:
  void open(const char* name) {
    QVERIFY(document_->load_template(test::scenario_path(QString::fromLatin1(name)), nullptr));
    editor_ = std::make_unique<ScenarioEditor>(document_.get());
  }
  void choose_mode(ServiceEdit::Mode mode) {
    QComboBox* box = editor_->service_edit()->mode_box();
    box->setCurrentIndex(mode);
    emit box->activated(mode);
  }

  std::unique_ptr<ScenarioDocument> document_;
  std::unique_ptr<ScenarioEditor> editor_;
};

SERVESIM_GUI_TEST(ServiceFieldsTest);

}  // namespace servesim::gui

#include "service_fields_test.moc"
