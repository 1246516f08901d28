// The form's expert-parallelism, speculation and disaggregation fields: each writes the keys
// the scenario schema reads (checked through parse_scenario), follows the JSON, keeps the keys
// it does not edit, and shows the scenario's own validation message in place.
#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QSpinBox>
#include <QTest>

#include "gui/features_edit.h"
#include "gui/scenario_document.h"
#include "gui/scenario_editor.h"
#include "gui/tradeoff_view.h"
#include "gui_test_registry.h"

namespace servesim::gui {
namespace {

template <typename Box>
Box* feature(ScenarioEditor& editor, const char* key) {
  return qobject_cast<Box*>(editor.features_edit()->field(QString::fromLatin1(key)));
}

}  // namespace

class FeaturesFieldsTest : public QObject {
  Q_OBJECT

 private slots:
  void init() { document_ = std::make_unique<ScenarioDocument>(); }
  void cleanup() {
    editor_.reset();
    document_.reset();
  }

  void speculation_switches_on_off_and_between_methods() {
    open("quickstart.json");
    auto* method = feature<QComboBox>(*editor_, "engine.speculative");
    auto* tokens = feature<QSpinBox>(*editor_, "engine.speculative.num_speculative_tokens");
    auto* rate = feature<QDoubleSpinBox>(*editor_, "engine.speculative.acceptance_rate");
    auto* draft = feature<QComboBox>(*editor_, "engine.speculative.model");
    QVERIFY(method && tokens && rate && draft);
    QCOMPARE(method->currentText(), QString("none"));
    QVERIFY(!tokens->isEnabled());

    method->setCurrentText("ngram");
    QCOMPARE(document_->value("engine.speculative")->dump(),
             std::string(R"({"acceptance_rate":0.6,"method":"ngram","num_speculative_tokens":4})"));
    QVERIFY2(document_->error().isEmpty(), qPrintable(document_->error()));
    QVERIFY(tokens->isEnabled());
    QVERIFY(!draft->isEnabled());
    tokens->setValue(3);
    rate->setValue(0.7);
    const auto& spec = document_->scenario()->config.engine.speculative;
    QVERIFY(spec.has_value());
    QCOMPARE(spec->num_speculative_tokens, 3);
    QCOMPARE(spec->acceptance, (std::vector<double>{0.7, 0.7, 0.7}));

    // The n-gram match rate: 1 (a match after every step) is the default and writes no key.
    auto* match = feature<QDoubleSpinBox>(*editor_, "engine.speculative.match_rate");
    QVERIFY(match && match->isEnabled());
    QCOMPARE(match->value(), 1.0);
    QVERIFY(!document_->value("engine.speculative.match_rate"));
    match->setValue(0.25);
    QCOMPARE(document_->scenario()->config.engine.speculative->match_rate, 0.25);
    match->setValue(1.0);
    QVERIFY(!document_->value("engine.speculative.match_rate"));
    match->setValue(0.4);

    method->setCurrentText("draft_model");  // k and acceptance carry over, a draft is named
    QVERIFY(!match->isEnabled());           // a draft model proposes after every step
    QVERIFY(!document_->value("engine.speculative.match_rate"));
    QVERIFY(draft->isEnabled());
    QCOMPARE(document_->value("engine.speculative.num_speculative_tokens")->get<int>(), 3);
    QCOMPARE(document_->value("engine.speculative.model")->get<std::string>(),
             std::string("TinyLlama-1.1B"));
    QVERIFY2(document_->error().isEmpty(), qPrintable(document_->error()));

    method->setCurrentText("none");
    QVERIFY(!document_->value("engine.speculative"));
    QVERIFY(!tokens->isEnabled());
  }

  void the_json_drives_the_speculation_fields_and_bad_values_are_flagged() {
    open("speculative-ngram-8b.json");
    auto* method = feature<QComboBox>(*editor_, "engine.speculative");
    QCOMPARE(method->currentText(), QString("ngram"));
    QCOMPARE(feature<QSpinBox>(*editor_, "engine.speculative.num_speculative_tokens")->value(), 4);
    // A key the form does not edit survives an edit of one it does.
    feature<QSpinBox>(*editor_, "engine.speculative.num_speculative_tokens")->setValue(2);
    QCOMPARE(document_->value("engine.speculative.prompt_lookup_max")->get<int>(), 4);
    // A per-position list leaves the rate field off.
    document_->set_value("engine.speculative.acceptance_rate", std::nullopt);
    document_->set_value("engine.speculative.acceptance_per_position",
                         nlohmann::json::parse("[0.8, 0.6]"));
    QVERIFY2(document_->error().isEmpty(), qPrintable(document_->error()));
    QVERIFY(!editor_->features_edit()->field("engine.speculative.acceptance_rate")->isEnabled());
    // A draft length the scenario refuses, typed in the JSON: its reason, in place.
    document_->set_value("engine.speculative.num_speculative_tokens", nlohmann::json(17));
    QVERIFY(document_->error().contains("num_speculative_tokens must be between 1 and 16"));
    const QStringList invalid = editor_->features_edit()->invalid_fields();
    QVERIFY(invalid.contains("engine.speculative.num_speculative_tokens"));
    QVERIFY(invalid.contains("engine.speculative"));
    QCOMPARE(method->toolTip(), document_->error());
    QVERIFY(!invalid.contains("disaggregation.prefill.instances"));
  }

  void disaggregation_adds_and_removes_its_block() {
    open("quickstart.json");
    auto* prefill = feature<QSpinBox>(*editor_, "disaggregation.prefill.instances");
    auto* decode = feature<QSpinBox>(*editor_, "disaggregation.decode.instances");
    auto* link = feature<QComboBox>(*editor_, "disaggregation.kv_transfer.link");
    QCOMPARE(prefill->text(), QString("aggregated"));
    QVERIFY(!decode->isEnabled());
    QVERIFY(!link->isEnabled());

    prefill->setValue(2);
    QCOMPARE(document_->value("disaggregation")->dump(),
             std::string(R"({"decode":{"instances":1},"prefill":{"instances":2}})"));
    QVERIFY2(document_->error().isEmpty(), qPrintable(document_->error()));
    QCOMPARE(link->currentText(), QString("infiniband"));  // the default, no key written
    decode->setValue(3);
    link->setCurrentText("ethernet");
    const DisaggregationSpec& d = document_->scenario()->config.disaggregation;
    QVERIFY(d.enabled);
    QCOMPARE(d.prefill.instances, 2);
    QCOMPARE(d.decode.instances, 3);
    QCOMPARE(d.kv_transfer.link, std::string("ethernet"));
    // Each instance a server of data-parallel ranks.
    auto* ranks = feature<QSpinBox>(*editor_, "disaggregation.decode.data_parallel_size");
    QVERIFY(ranks->isEnabled());
    ranks->setValue(2);
    QVERIFY2(document_->error().isEmpty(), qPrintable(document_->error()));
    QCOMPARE(document_->scenario()->config.disaggregation.decode.parallel.dp, 2);
    QCOMPARE(document_->scenario()->config.disaggregation.prefill.parallel.dp, 1);
    prefill->setValue(1);  // the block's other keys stay
    QCOMPARE(document_->value("disaggregation.kv_transfer.link")->get<std::string>(),
             std::string("ethernet"));

    // No decode instance, typed in the JSON: refused, and the form says where.
    document_->set_value("disaggregation.decode.instances", nlohmann::json(0));
    QVERIFY(document_->error().contains("disaggregation.decode: instances must be > 0"));
    QCOMPARE(editor_->features_edit()->invalid_fields(),
             QStringList{"disaggregation.decode.instances"});
    prefill->setValue(0);
    QVERIFY(!document_->value("disaggregation"));
    QVERIFY(!decode->isEnabled());
  }

  void expert_parallelism_and_its_routing_skew() {
    open("ep-mixtral-8x7b.json");
    auto* ep = feature<QCheckBox>(*editor_, "parallel.enable_expert_parallel");
    auto* skew = feature<QDoubleSpinBox>(*editor_, "parallel.expert_zipf_exponent");
    QVERIFY(ep && skew);
    ep->setChecked(false);
    QVERIFY(!document_->value("parallel.enable_expert_parallel"));
    ep->setChecked(true);
    QVERIFY(document_->scenario()->config.parallel.enable_expert_parallel);
    skew->setValue(1.5);
    QCOMPARE(document_->value("parallel.expert_popularity")->get<std::string>(),
             std::string("zipf"));
    QCOMPARE(document_->scenario()->config.parallel.expert_zipf_exponent, 1.5);
    skew->setValue(0);  // "uniform" removes both keys
    QCOMPARE(skew->text(), QString("uniform"));
    QVERIFY(!document_->value("parallel.expert_popularity"));
    QVERIFY(!document_->value("parallel.expert_zipf_exponent"));
    QVERIFY2(document_->error().isEmpty(), qPrintable(document_->error()));
  }

  void the_tradeoffs_tab_suggests_the_features_knobs() {
    const QStringList keys = TradeoffView::suggested_keys();
    for (const char* key :
         {"engine.kv_offloading_size_gib", "engine.speculative.num_speculative_tokens",
          "disaggregation.prefill.instances", "disaggregation.decode.data_parallel_size",
          "parallel.expert_zipf_exponent"}) {
      QVERIFY2(keys.contains(QString::fromLatin1(key)), key);
      QVERIFY2(!TradeoffView::suggested_values(QString::fromLatin1(key)).isEmpty(), key);
    }
  }

 private:
  void open(const char* name) {
    QVERIFY(document_->load_template(test::scenario_path(QString::fromLatin1(name)), nullptr));
    editor_ = std::make_unique<ScenarioEditor>(document_.get());
  }

  std::unique_ptr<ScenarioDocument> document_;
  std::unique_ptr<ScenarioEditor> editor_;
};

SERVESIM_GUI_TEST(FeaturesFieldsTest);

}  // namespace servesim::gui

#include "features_fields_test.moc"
