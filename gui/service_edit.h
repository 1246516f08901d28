// ServiceEdit: the "Service" group of the scenario form — the request path above the engine
// (docs/service-layer.md, keys service.* in docs/config-reference.md). A mode first: served
// through vLLM's API server (the default: no "service" key), engine only ("service": "none")
// or a service path of its own (an object); then, for an object, the network round trip, a
// gateway (on/off, workers, request time, rate limit), the API server, the pre-model stages
// (a table: name, workers, mean and std of the request time) and the client's timeout and
// retries, and the load generator's own CPU (threads; "ideal" leaves it out). Times show in ms or
// µs and are written in seconds, as the CLI reads them; a time with a std is a lognormal {mean,
// std}, without one a bare number.
//
// Every field writes its own key through ScenarioDocument::set_value, so keys the form does
// not edit (queue_capacity, a stage's cv, a retry's jitter, …) stay as they were. A time
// kept in a form the fields cannot show (uniform, empirical) disables its field ("edit in
// JSON"). Fields the validation error names get a red frame and the error as tooltip.
// Thread-safety: GUI thread only. Borrows the document (which must outlive the widget).
#pragma once

#include <QGroupBox>
#include <QString>
#include <QStringList>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

class QCheckBox;
class QComboBox;
class QFormLayout;
class QTableWidget;

namespace servesim::gui {

class ScenarioDocument;

class ServiceEdit : public QGroupBox {
  Q_OBJECT

 public:
  enum Mode { kDefaultFrontend, kEngineOnly, kCustom };

  explicit ServiceEdit(ScenarioDocument* document, QWidget* parent = nullptr);

  // The mode of the document as it stands.
  Mode mode() const;
  QComboBox* mode_box() const { return mode_; }
  // The widget of a key ("service.gateway.workers"; a std has ":std" appended, e.g.
  // "service.network.rtt_s:std"; "service.gateway" is the on/off check box), or null.
  QWidget* field(const QString& key) const;
  QStringList field_keys() const;
  QStringList invalid_fields() const;
  QTableWidget* stages_table() const { return stages_; }
  void add_stage();
  void remove_stage(int row);

  // A time distribution's mean and std in seconds, as the fields show it; nullopt for forms
  // the fields cannot show.
  static std::optional<double> mean_s(const nlohmann::json& time);
  static double std_s(const nlohmann::json& time);
  // The JSON of a time with this mean and std (s): a bare number without a std, else a
  // lognormal — or `current`'s normal/lognormal with its other keys kept.
  static nlohmann::json time_json(double mean_s, double std_s,
                                  const std::optional<nlohmann::json>& current);

 private:
  // kNumber: a plain number, 0 removes the key; kTimeMean/kTimeStd: the two halves of a time.
  enum class Kind { kInt, kNumber, kTimeMean, kTimeStd };
  struct Field {
    std::string key;  // dotted scenario key
    Kind kind;
    double scale = 1;  // shown value = seconds (or the key's unit) × scale
    QWidget* widget = nullptr;
    QString tip;
  };

  void build_fields();
  void add_field(const std::string& key, Kind kind, double scale, const QString& label,
                 const QString& suffix, const QString& tip, double min = 0);
  void write_mode(int index);
  void write_field(const Field& field);
  void write_gateway(bool on);
  void write_retry_attempts(int attempts);
  void write_client_threads(int threads);  // 0: no client machine
  void write_stages();
  bool field_applies(const Field& field) const;
  void refresh();
  void refresh_field(const Field& field);
  void refresh_stages();
  void mark_invalid(QWidget* widget, const QStringList& needles, const QString& tip);

  ScenarioDocument* document_;
  QComboBox* mode_;
  std::vector<Field> fields_;
  QCheckBox* gateway_;
  QTableWidget* stages_;
  QFormLayout* form_;
};

}  // namespace servesim::gui
