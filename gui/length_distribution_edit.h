// LengthDistributionEdit: a form field for a workload length (prompt_tokens, output_tokens)
// as docs/workloads.md defines it — a distribution type and its one or two parameters:
// fixed (value, written as a bare number), uniform (min, max), normal and lognormal (mean,
// std), exponential (mean). Other forms (empirical lengths, lognormal by mu/sigma) show as
// "edit in JSON" with the parameters disabled, and are never rewritten from here.
//
// The field writes JSON, it does not judge it: the scenario's own checks (shown in place by
// the editor) say what is wrong. Thread-safety: GUI thread only.
#pragma once

#include <QWidget>
#include <nlohmann/json.hpp>
#include <optional>

class QComboBox;
class QDoubleSpinBox;
class QLabel;

namespace servesim::gui {

class LengthDistributionEdit : public QWidget {
  Q_OBJECT

 public:
  explicit LengthDistributionEdit(QWidget* parent = nullptr);

  // Shows `value` (nullopt or an unsupported form: type "edit in JSON"). Emits nothing.
  void set_value(const std::optional<nlohmann::json>& value);
  // The JSON the field stands for now. Keys of `current` that the field does not edit
  // (clipping min/max of a normal, say) are kept when the type is unchanged.
  nlohmann::json value(const std::optional<nlohmann::json>& current) const;
  // False while the shown value is a form the field cannot edit.
  bool editable_form() const;

  QComboBox* type_box() const { return type_; }
  QDoubleSpinBox* first() const { return first_; }
  QDoubleSpinBox* second() const { return second_; }

 signals:
  // The user changed the type or a parameter.
  void edited();

 private:
  void on_type_changed();
  // Labels and enables the parameters for the type shown.
  void update_parameters();

  QComboBox* type_;
  QLabel* first_label_;
  QDoubleSpinBox* first_;
  QLabel* second_label_;
  QDoubleSpinBox* second_;
};

}  // namespace servesim::gui
