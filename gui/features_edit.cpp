#include "gui/features_edit.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QSignalBlocker>
#include <QSpinBox>
#include <optional>
#include <string>
#include <string_view>

#include "gui/error_style.h"
#include "gui/scenario_document.h"
#include "models/parallel_config.h"
#include "models/speculative_config.h"
#include "sim/serving/disaggregation_spec.h"

namespace servesim::gui {
namespace {

const char* const kExpertParallel = "parallel.enable_expert_parallel";
const char* const kZipf = "parallel.expert_zipf_exponent";
const char* const kSpeculative = "engine.speculative";
const char* const kDraftModel = "engine.speculative.model";
const char* const kAcceptanceRate = "engine.speculative.acceptance_rate";
const char* const kMatchRate = "engine.speculative.match_rate";
const char* const kDisaggregation = "disaggregation";
const char* const kPrefillInstances = "disaggregation.prefill.instances";
// What the form writes with a new speculative block: docs/speculative-decoding.md's example.
constexpr int kDefaultDraftTokens = 4;
constexpr double kDefaultAcceptance = 0.6;
// The catalog's smallest Llama-vocabulary model, offered as a new block's draft model.
const char* const kDefaultDraft = "TinyLlama-1.1B";

QString method_of(const std::optional<nlohmann::json>& block) {
  if (!block || !block->is_object()) return QStringLiteral("none");
  if (block->contains("method") && (*block)["method"].is_string()) {
    return QString::fromStdString((*block)["method"].get<std::string>());
  }
  return block->contains("model") ? QStringLiteral("draft_model") : QStringLiteral("ngram");
}

}  // namespace

FeaturesEdit::FeaturesEdit(ScenarioDocument* document, QWidget* parent)
    : QGroupBox(tr("Expert parallelism, speculation, disaggregation"), parent),
      document_(document),
      form_(new QFormLayout(this)) {
  form_->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);

  auto* ep = new QCheckBox(tr("enable_expert_parallel"), this);
  ep->setToolTip(
      tr("parallel.enable_expert_parallel: experts over EP = TP x DP ranks, "
         "attention data parallel (vLLM --enable-expert-parallel; MoE models)"));
  add_field(kExpertParallel, Kind::kCheck, ep, QString());
  auto* zipf = new QDoubleSpinBox(this);
  zipf->setRange(0, kMaxExpertZipfExponent);
  zipf->setSingleStep(0.25);
  zipf->setDecimals(2);
  zipf->setSpecialValueText(tr("uniform"));
  zipf->setToolTip(
      tr("parallel.expert_zipf_exponent: routed experts' popularity ~ 1 / rank^s "
         "(expert_popularity \"zipf\"); uniform: every expert alike"));
  add_field(kZipf, Kind::kNumber, zipf, tr("Expert &skew"));

  auto* method = new QComboBox(this);
  method->addItem(QStringLiteral("none"));
  for (SpeculativeMethod m : {SpeculativeMethod::kNgram, SpeculativeMethod::kDraftModel,
                              SpeculativeMethod::kMtp, SpeculativeMethod::kEagle}) {
    method->addItem(QString::fromLatin1(speculative_method_name(m).data(),
                                        static_cast<int>(speculative_method_name(m).size())));
  }
  method->setToolTip(tr("engine.speculative.method (vLLM --speculative-config); none: no block"));
  add_field(kSpeculative, Kind::kChoice, method, tr("Spec&ulative"));
  auto* tokens = new QSpinBox(this);
  tokens->setRange(1, kMaxSpeculativeDraftTokens);
  tokens->setToolTip(tr("engine.speculative.num_speculative_tokens: drafts verified per step"));
  add_field("engine.speculative.num_speculative_tokens", Kind::kInt, tokens, tr("  Draft tokens"));
  auto* rate = new QDoubleSpinBox(this);
  rate->setRange(0, 1);
  rate->setSingleStep(0.05);
  rate->setDecimals(3);
  rate->setToolTip(
      tr("engine.speculative.acceptance_rate: chance each draft is accepted given the ones "
         "before it were (measured, or from an engine run)"));
  add_field(kAcceptanceRate, Kind::kNumber, rate, tr("  Acceptance rate"));
  auto* match = new QDoubleSpinBox(this);
  match->setRange(0.01, 1);
  match->setSingleStep(0.05);
  match->setDecimals(3);
  match->setToolTip(
      tr("engine.speculative.match_rate (ngram): share of decode steps after which prompt lookup "
         "finds a match, so the next step verifies drafts; 1: every step (engine run measures "
         "it)"));
  add_field(kMatchRate, Kind::kNumber, match, tr("  Match rate"));
  auto* draft = new QComboBox(this);
  draft->setEditable(true);
  draft->setInsertPolicy(QComboBox::NoInsert);
  for (const ModelSpec& m : document_->catalog().models()) {
    draft->addItem(QString::fromStdString(m.name));
  }
  draft->setToolTip(tr("engine.speculative.model: the draft model (draft_model, eagle)"));
  add_field(kDraftModel, Kind::kChoice, draft, tr("  Draft model"));

  auto* prefill = new QSpinBox(this);
  prefill->setRange(0, 4096);
  prefill->setSpecialValueText(tr("aggregated"));
  prefill->setToolTip(
      tr("disaggregation.prefill.instances: prefill instances of an xPyD deployment "
         "(aggregated: no disaggregation block)"));
  add_field(kPrefillInstances, Kind::kInt, prefill, tr("P&refill instances"));
  auto* decode = new QSpinBox(this);
  decode->setRange(1, 4096);
  decode->setToolTip(tr("disaggregation.decode.instances"));
  add_field("disaggregation.decode.instances", Kind::kInt, decode, tr("  Decode instances"));
  for (const char* role : {"prefill", "decode"}) {
    auto* ranks = new QSpinBox(this);
    ranks->setRange(1, 4096);
    const std::string key = std::string("disaggregation.") + role + ".data_parallel_size";
    ranks->setToolTip(
        tr("%1: data-parallel ranks per instance (one vllm serve --data-parallel-size; with "
           "expert parallelism EP = TP x DP, the ranks stepping together)")
            .arg(QString::fromStdString(key)));
    add_field(
        key, Kind::kInt, ranks,
        std::string_view(role) == "prefill" ? tr("  Prefill DP ranks") : tr("  Decode DP ranks"));
  }
  auto* link = new QComboBox(this);
  link->addItems({QStringLiteral("infiniband"), QStringLiteral("ethernet"),
                  QStringLiteral("nvlink"), QStringLiteral("pcie"), QStringLiteral("custom")});
  link->setToolTip(tr("disaggregation.kv_transfer.link: the KV transfer's preset"));
  add_field("disaggregation.kv_transfer.link", Kind::kChoice, link, tr("  KV link"));

  connect(document_, &ScenarioDocument::changed, this, &FeaturesEdit::refresh);
  refresh();
}

void FeaturesEdit::add_field(const std::string& key, Kind kind, QWidget* widget,
                             const QString& label) {
  widget->setObjectName(QString::fromStdString(key));
  form_->addRow(label, widget);
  fields_.push_back({key, kind, widget, widget->toolTip()});
  const Field field = fields_.back();
  if (auto* check = qobject_cast<QCheckBox*>(widget)) {
    connect(check, &QCheckBox::toggled, this, [this, field] { write_field(field); });
  } else if (auto* spin = qobject_cast<QSpinBox*>(widget)) {
    connect(spin, &QSpinBox::valueChanged, this, [this, field] { write_field(field); });
  } else if (auto* dspin = qobject_cast<QDoubleSpinBox*>(widget)) {
    connect(dspin, &QDoubleSpinBox::valueChanged, this, [this, field] { write_field(field); });
  } else if (auto* combo = qobject_cast<QComboBox*>(widget)) {
    connect(combo, &QComboBox::currentTextChanged, this, [this, field] { write_field(field); });
  }
}

QWidget* FeaturesEdit::field(const QString& key) const {
  for (const Field& f : fields_) {
    if (QString::fromStdString(f.key) == key) return f.widget;
  }
  return nullptr;
}

QStringList FeaturesEdit::field_keys() const {
  QStringList keys;
  for (const Field& f : fields_) keys << QString::fromStdString(f.key);
  return keys;
}

QStringList FeaturesEdit::invalid_fields() const {
  QStringList keys;
  for (const Field& f : fields_) {
    if (f.widget->property("invalid").toBool()) keys << QString::fromStdString(f.key);
  }
  return keys;
}

void FeaturesEdit::write_field(const Field& field) {
  if (field.key == kSpeculative) {
    write_method(qobject_cast<QComboBox*>(field.widget)->currentText());
    return;
  }
  if (field.key == kPrefillInstances) {
    write_prefill_instances(qobject_cast<QSpinBox*>(field.widget)->value());
    return;
  }
  if (field.key == kMatchRate) {
    // 1, a match after every step, is the default: no key.
    const double r = qobject_cast<QDoubleSpinBox*>(field.widget)->value();
    document_->set_value(kMatchRate, r < 1 ? std::optional<nlohmann::json>(r) : std::nullopt);
    return;
  }
  if (field.key == kZipf) {
    // The exponent only counts with "zipf"; 0 ("uniform") removes both keys.
    const double s = qobject_cast<QDoubleSpinBox*>(field.widget)->value();
    document_->set_value("parallel.expert_popularity",
                         s > 0 ? std::optional<nlohmann::json>("zipf") : std::nullopt);
    document_->set_value(kZipf, s > 0 ? std::optional<nlohmann::json>(s) : std::nullopt);
    return;
  }
  std::optional<nlohmann::json> value;
  switch (field.kind) {
    case Kind::kCheck:
      // Unchecked is vLLM's default: no key.
      if (qobject_cast<QCheckBox*>(field.widget)->isChecked()) value = true;
      break;
    case Kind::kInt:
      value = qobject_cast<QSpinBox*>(field.widget)->value();
      break;
    case Kind::kNumber:
      value = qobject_cast<QDoubleSpinBox*>(field.widget)->value();
      break;
    case Kind::kChoice:
      value = qobject_cast<QComboBox*>(field.widget)->currentText().toStdString();
      break;
  }
  document_->set_value(field.key, value);
}

void FeaturesEdit::write_method(const QString& method) {
  const std::optional<nlohmann::json> old = document_->value(kSpeculative);
  if (method == QLatin1String("none")) {
    document_->set_value(kSpeculative, std::nullopt);
    return;
  }
  const nlohmann::json previous = old && old->is_object() ? *old : nlohmann::json::object();
  // The draft length and acceptance carry over; the rest is what the new method takes.
  nlohmann::json block = {{"method", method.toStdString()},
                          {"num_speculative_tokens", kDefaultDraftTokens}};
  if (previous.contains("num_speculative_tokens")) {
    block["num_speculative_tokens"] = previous["num_speculative_tokens"];
  }
  if (previous.contains("acceptance_per_position")) {
    block["acceptance_per_position"] = previous["acceptance_per_position"];
  } else {
    block["acceptance_rate"] = previous.value("acceptance_rate", kDefaultAcceptance);
  }
  if (method == QLatin1String("ngram")) {
    for (const char* key : {"prompt_lookup_min", "prompt_lookup_max", "match_rate"}) {
      if (previous.contains(key)) block[key] = previous[key];
    }
  }
  if (method == QLatin1String("draft_model") || method == QLatin1String("eagle")) {
    block["model"] = previous.value("model", std::string(kDefaultDraft));
  }
  document_->set_value(kSpeculative, block);
}

void FeaturesEdit::write_prefill_instances(int instances) {
  if (instances == 0) {
    document_->set_value(kDisaggregation, std::nullopt);
    return;
  }
  if (document_->value(kDisaggregation)) {
    document_->set_value(kPrefillInstances, instances);
    return;
  }
  document_->set_value(kDisaggregation, nlohmann::json{{"prefill", {{"instances", instances}}},
                                                       {"decode", {{"instances", 1}}}});
}

bool FeaturesEdit::field_applies(const Field& field) const {
  if (!document_->is_json_object()) return false;
  const std::string& k = field.key;
  const std::optional<nlohmann::json> speculative = document_->value(kSpeculative);
  if (k.rfind("engine.speculative.", 0) == 0) {
    if (!speculative || !speculative->is_object()) return false;
    const QString method = method_of(speculative);
    if (k == kDraftModel) {
      return method == QLatin1String("draft_model") || method == QLatin1String("eagle");
    }
    if (k == kAcceptanceRate) return !speculative->contains("acceptance_per_position");
    if (k == kMatchRate) return method == QLatin1String("ngram");
    return true;
  }
  if (k.rfind("disaggregation.", 0) == 0 && k != kPrefillInstances) {
    return document_->value(kDisaggregation).has_value();
  }
  return true;
}

void FeaturesEdit::refresh() {
  for (const Field& f : fields_) refresh_field(f);
}

void FeaturesEdit::refresh_field(const Field& f) {
  const QSignalBlocker block(f.widget);
  const std::optional<nlohmann::json> v = document_->value(f.key);
  f.widget->setEnabled(field_applies(f));
  if (auto* check = qobject_cast<QCheckBox*>(f.widget)) {
    check->setChecked(v && v->is_boolean() && v->get<bool>());
  } else if (auto* spin = qobject_cast<QSpinBox*>(f.widget)) {
    spin->setValue(v && v->is_number_integer() ? v->get<int>() : spin->minimum());
  } else if (auto* dspin = qobject_cast<QDoubleSpinBox*>(f.widget)) {
    const double absent = f.key == kMatchRate ? 1.0 : dspin->minimum();
    dspin->setValue(v && v->is_number() ? v->get<double>() : absent);
  } else if (auto* combo = qobject_cast<QComboBox*>(f.widget)) {
    QString text = v && v->is_string() ? QString::fromStdString(v->get<std::string>()) : "";
    if (f.key == kSpeculative) text = method_of(v);
    if (f.key == "disaggregation.kv_transfer.link" && text.isEmpty()) {
      text = QString::fromStdString(KvTransferSpec().link);
    }
    if (combo->isEditable()) {
      combo->setEditText(text);
    } else {
      combo->setCurrentIndex(combo->findText(text));
    }
  }
  // The scenario's errors name a key by its context ("engine.speculative: ...") or its dotted
  // path; the method box answers for its whole block.
  const QString error = document_->error();
  const QString dotted = QString::fromStdString(f.key);
  const int dot = dotted.lastIndexOf(QLatin1Char('.'));
  const QString leaf = dotted.mid(dot + 1);
  const bool invalid =
      !error.isEmpty() &&
      (error.contains(dotted) || error.contains(dotted.left(dot) + QStringLiteral(": ") + leaf) ||
       (f.key == kSpeculative && error.contains(QLatin1String("speculative"))));
  f.widget->setProperty("invalid", invalid);
  f.widget->setStyleSheet(invalid ? invalid_field_style() : QString());
  f.widget->setToolTip(invalid ? error : f.tip);
}

}  // namespace servesim::gui
