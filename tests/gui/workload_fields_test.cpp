// The workload's form fields: the arrival process and its parameters, length distributions,
// request count and shared prefixes write the JSON the scenario schema reads, follow the
// JSON, and show the scenario's own validation message in place before any run.
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QPlainTextEdit>
#include <QSpinBox>
#include <QTest>

#include "gui/length_distribution_edit.h"
#include "gui/scenario_document.h"
#include "gui/scenario_editor.h"
#include "gui_test_registry.h"

namespace servesim::gui {

class WorkloadFieldsTest : public QObject {
  Q_OBJECT

 private slots:
  void init() {
    document_ = std::make_unique<ScenarioDocument>();
    QVERIFY(document_->load_template(test::scenario_path("quickstart.json"), nullptr));
    editor_ = std::make_unique<ScenarioEditor>(document_.get());
  }
  void cleanup() {
    editor_.reset();
    document_.reset();
  }

  void the_arrival_process_switches_with_its_keys() {
    auto* type = qobject_cast<QComboBox*>(editor_->field("workload.arrival.type"));
    QVERIFY(type);
    QCOMPARE(type->currentText(), QString("poisson"));
    auto* cv = editor_->field("workload.arrival.cv");
    auto* clients = editor_->field("workload.arrival.clients");
    QVERIFY(!cv->isEnabled());
    QVERIFY(!clients->isEnabled());

    type->setCurrentText("gamma");
    QCOMPARE(document_->value("workload.arrival")->dump(),
             std::string(R"({"cv":2,"rate_qps":2,"type":"gamma"})"));
    QVERIFY2(document_->error().isEmpty(), qPrintable(document_->error()));
    QVERIFY(cv->isEnabled());
    qobject_cast<QDoubleSpinBox*>(cv)->setValue(3.5);
    QCOMPARE(document_->value("workload.arrival.cv")->get<double>(), 3.5);
    QVERIFY(document_->scenario().has_value());

    type->setCurrentText("closed");
    QVERIFY2(document_->error().isEmpty(), qPrintable(document_->error()));
    QVERIFY(clients->isEnabled());
    QVERIFY(!editor_->field("workload.arrival.rate_qps")->isEnabled());
    QCOMPARE(qobject_cast<QSpinBox*>(clients)->value(), 16);

    type->setCurrentText("poisson");  // the rate comes back as 1 req/s, the form's default
    QCOMPARE(document_->value("workload.arrival.rate_qps")->get<double>(), 1.0);
  }

  void a_bad_arrival_parameter_is_flagged_in_place() {
    auto* rate = qobject_cast<QDoubleSpinBox*>(editor_->field("workload.arrival.rate_qps"));
    rate->setValue(0.0);
    QVERIFY(!document_->scenario().has_value());
    QCOMPARE(editor_->invalid_fields(), QStringList{"workload.arrival.rate_qps"});
    QVERIFY(rate->toolTip().contains("rate_qps"));
    QVERIFY2(editor_->error_text().contains("rate_qps: must be a positive number"),
             qPrintable(editor_->error_text()));
    rate->setValue(4.0);
    QVERIFY(editor_->invalid_fields().isEmpty());
  }

  void length_distributions_write_the_schema_and_keep_clipping() {
    auto* prompt = qobject_cast<LengthDistributionEdit*>(editor_->field("workload.prompt_tokens"));
    QVERIFY(prompt);
    QCOMPARE(prompt->type_box()->currentText(), QString("fixed"));
    QCOMPARE(prompt->first()->value(), 512.0);

    prompt->type_box()->setCurrentText("lognormal");
    QCOMPARE(document_->value("workload.prompt_tokens")->dump(),
             std::string(R"({"mean":512,"std":256,"type":"lognormal"})"));
    QVERIFY2(document_->error().isEmpty(), qPrintable(document_->error()));

    // A clipping bound typed into the JSON survives an edit through the form.
    document_->set_value("workload.prompt_tokens.max", nlohmann::json(2000));
    prompt->second()->setValue(300);
    QCOMPARE(document_->value("workload.prompt_tokens")->dump(),
             std::string(R"({"max":2000,"mean":512,"std":300,"type":"lognormal"})"));

    auto* output = qobject_cast<LengthDistributionEdit*>(editor_->field("workload.output_tokens"));
    output->type_box()->setCurrentText("uniform");
    output->first()->setValue(300);  // min above max (256): the schema's message, in place
    QVERIFY2(!document_->scenario().has_value(), document_->value("workload")->dump().c_str());
    QCOMPARE(editor_->invalid_fields(), QStringList{"workload.output_tokens"});
    QVERIFY2(editor_->error_text().contains("output_tokens.max: must be >= min"),
             qPrintable(editor_->error_text()));
    output->second()->setValue(400);
    QVERIFY2(document_->error().isEmpty(), qPrintable(document_->error()));

    // Forms the field cannot edit are left to the JSON.
    document_->set_value("workload.output_tokens",
                         nlohmann::json{{"type", "empirical"}, {"values", {10, 20}}});
    QVERIFY(!output->editable_form());
    QVERIFY(!output->first()->isEnabled());
  }

  void requests_and_shared_prefixes() {
    auto* requests = qobject_cast<QSpinBox*>(editor_->field("workload.num_requests"));
    QCOMPARE(requests->value(), 1000);
    requests->setValue(0);  // "no cap": the key goes, and the open loop no longer ends
    QVERIFY(!document_->value("workload.num_requests").has_value());
    QCOMPARE(editor_->invalid_fields(), QStringList{"workload.num_requests"});
    requests->setValue(300);
    QVERIFY(editor_->invalid_fields().isEmpty());

    auto* groups = qobject_cast<QSpinBox*>(editor_->field("workload.shared_prefix.groups"));
    auto* tokens = qobject_cast<QSpinBox*>(editor_->field("workload.shared_prefix.tokens"));
    QCOMPARE(groups->text(), QString("none"));
    QVERIFY(!tokens->isEnabled());
    groups->setValue(4);
    QCOMPARE(document_->value("workload.shared_prefix")->dump(),
             std::string(R"({"groups":4,"tokens":512})"));
    QVERIFY(tokens->isEnabled());
    QCOMPARE(document_->scenario()->config.workload.shared_prefix->groups, 4);
    tokens->setValue(1024);
    QCOMPARE(document_->scenario()->config.workload.shared_prefix->tokens, 1024);
    document_->set_value("workload.shared_prefix.groups", nlohmann::json(-2));  // typed in JSON
    QVERIFY(!document_->scenario().has_value());
    QCOMPARE(editor_->invalid_fields(), QStringList{"workload.shared_prefix.groups"});
    QVERIFY2(groups->toolTip().contains("shared_prefix: groups must be in [1, 1e9]"),
             qPrintable(groups->toolTip()));
    groups->setValue(2);  // fixed through the form
    QVERIFY(editor_->invalid_fields().isEmpty());
    groups->setValue(0);
    QVERIFY(!document_->value("workload.shared_prefix").has_value());
    QVERIFY(editor_->invalid_fields().isEmpty());
  }

  void a_benchmarks_dataset_of_prompts() {
    auto* dataset = qobject_cast<QSpinBox*>(editor_->field("workload.distinct_prompts"));
    QCOMPARE(dataset->text(), QString("new each time"));
    dataset->setValue(100);
    QCOMPARE(document_->value("workload.distinct_prompts")->get<int>(), 100);
    QCOMPARE(document_->scenario()->config.workload.distinct_prompts, 100);
    document_->set_value("workload.shared_prefix", nlohmann::json{{"groups", 2}, {"tokens", 8}});
    QCOMPARE(editor_->invalid_fields(), QStringList{"workload.distinct_prompts"});
    document_->set_value("workload.shared_prefix", std::nullopt);
    dataset->setValue(0);
    QVERIFY(!document_->value("workload.distinct_prompts").has_value());
    QVERIFY(editor_->invalid_fields().isEmpty());
  }

  void a_workload_file_leaves_the_workload_fields_off() {
    document_->set_value("workload", nlohmann::json("../workloads/some.json"));
    for (const char* key : {"workload.arrival.type", "workload.prompt_tokens",
                            "workload.num_requests", "workload.shared_prefix.groups"}) {
      QVERIFY2(!editor_->field(key)->isEnabled(), key);
    }
    QVERIFY(editor_->field("engine.max_num_seqs")->isEnabled());
  }

 private:
  std::unique_ptr<ScenarioDocument> document_;
  std::unique_ptr<ScenarioEditor> editor_;
};

SERVESIM_GUI_TEST(WorkloadFieldsTest);

}  // namespace servesim::gui

#include "workload_fields_test.moc"
