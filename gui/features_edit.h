// FeaturesEdit: the "Expert parallelism, speculation, disaggregation" group of the scenario
// form — the deployment features of docs/expert-parallelism.md, docs/speculative-decoding.md
// and docs/disaggregation.md (KV offload is a field of the engine group). Expert parallelism
// (parallel.enable_expert_parallel, the routing skew parallel.expert_zipf_exponent); a
// speculative method ("none" removes engine.speculative) with its draft tokens, acceptance
// rate and, for draft_model, the draft model; prefill and decode instances ("aggregated"
// removes the disaggregation block) and the KV link preset.
//
// Every field writes its own key through ScenarioDocument::set_value, so keys the form does
// not edit (prompt_lookup_*, a role's own engine flags, the link's custom figures) stay as
// they were; switching the method rebuilds the block with the keys that method takes. A
// field whose block is absent is disabled. Fields the validation error names get a red frame
// and the error as tooltip.
// Thread-safety: GUI thread only. Borrows the document (which must outlive the widget).
#pragma once

#include <QGroupBox>
#include <QString>
#include <QStringList>
#include <string>
#include <vector>

class QFormLayout;

namespace servesim::gui {

class ScenarioDocument;

class FeaturesEdit : public QGroupBox {
  Q_OBJECT

 public:
  explicit FeaturesEdit(ScenarioDocument* document, QWidget* parent = nullptr);

  // The widget of a dotted key ("engine.speculative.num_speculative_tokens"; "engine.speculative"
  // is the method box, "disaggregation.prefill.instances" the aggregated/disaggregated
  // switch), or null.
  QWidget* field(const QString& key) const;
  QStringList field_keys() const;
  QStringList invalid_fields() const;

 private:
  enum class Kind { kCheck, kInt, kNumber, kChoice };
  struct Field {
    std::string key;
    Kind kind;
    QWidget* widget = nullptr;
    QString tip;
  };

  void add_field(const std::string& key, Kind kind, QWidget* widget, const QString& label);
  void write_field(const Field& field);
  void write_method(const QString& method);
  void write_prefill_instances(int instances);
  bool field_applies(const Field& field) const;
  void refresh();
  void refresh_field(const Field& field);

  ScenarioDocument* document_;
  QFormLayout* form_;
  std::vector<Field> fields_;
};

}  // namespace servesim::gui
