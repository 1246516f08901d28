// ScenarioEditor: the editing surface of a ScenarioDocument — form fields for the knobs
// people turn most (model, GPU, TP/PP/DP, max_num_seqs, max_num_batched_tokens,
// max_model_len, gpu_memory_utilization, prefix caching, KV offload, SLOs), for expert
// parallelism, speculative decoding and disaggregation (FeaturesEdit), for an inline workload
// (arrival process and its rate, gamma CV or clients, prompt and output length
// distributions, request count, shared prefixes) and the service path (ServiceEdit) above the
// full JSON text. Model and GPU are editable lists of the catalog's names that also take a
// file path (typed, or from "Browse…"). Both edit the same
// document: a field writes its key into the JSON, typing in the JSON refreshes the fields.
// Workload fields are disabled for a workload kept in its own file, and the parameters of an
// arrival process other than the one chosen are disabled. The validation error is shown under
// the form; the field it names gets a red frame and the error as its tooltip, and a JSON
// syntax error marks its line.
//
// Thread-safety: GUI thread only. Borrows the document (which must outlive the editor).
#pragma once

#include <QString>
#include <QStringList>
#include <QWidget>
#include <string>
#include <vector>

class QFormLayout;
class QGroupBox;
class QLabel;
class QPlainTextEdit;

namespace servesim::gui {

class ScenarioDocument;
class FeaturesEdit;
class ServiceEdit;

class ScenarioEditor : public QWidget {
  Q_OBJECT

 public:
  explicit ScenarioEditor(ScenarioDocument* document, QWidget* parent = nullptr);

  // The scenario keys of the form fields, in form order (e.g. "engine.max_num_seqs").
  QStringList field_keys() const;
  // The widget editing `key` (a QComboBox, QSpinBox, QDoubleSpinBox, QCheckBox or
  // LengthDistributionEdit).
  QWidget* field(const QString& key) const;
  // Keys of the fields currently flagged invalid.
  QStringList invalid_fields() const;
  QPlainTextEdit* text_edit() const { return text_; }
  // The Service group (its own fields: ServiceEdit::field()).
  ServiceEdit* service_edit() const { return service_; }
  // Expert parallelism, speculation and disaggregation (FeaturesEdit::field()).
  FeaturesEdit* features_edit() const { return features_; }
  QString error_text() const;

 private:
  struct Field {
    std::string key;
    QWidget* widget = nullptr;
    QStringList needles;  // an error mentioning one of these is about this field
    QString tip;          // the tooltip while the field is valid
  };

  // The constructor's builders, one per group of the form.
  void add_deployment_fields(QGroupBox* form_box, QFormLayout* form);
  void add_engine_fields(QGroupBox* form_box, QFormLayout* form);
  QGroupBox* add_workload_group();
  void add_slo_fields(QFormLayout* form);
  void lay_out(QGroupBox* form_box, QGroupBox* workload_box);
  void add_field(const std::string& key, QWidget* widget, QStringList needles);
  void refresh();
  void write_field(const Field& field);
  // Switching the arrival process rewrites the arrival object: each type has its own keys.
  void write_arrival_type(const QString& type);
  // Shared prefixes are one object: 0 groups removes it, the first group adds its tokens.
  void write_prefix_groups(int groups);
  // Whether a field can be edited in the document as it stands.
  bool field_applies(const Field& field) const;
  void browse_file(const std::string& key, const QString& title);

  ScenarioDocument* document_;
  std::vector<Field> fields_;
  QLabel* error_;
  QPlainTextEdit* text_;
  ServiceEdit* service_ = nullptr;
  FeaturesEdit* features_ = nullptr;
};

}  // namespace servesim::gui
