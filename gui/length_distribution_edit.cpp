#include "gui/length_distribution_edit.h"

#include <QComboBox>
#include <QDoubleSpinBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QSignalBlocker>
#include <QStandardItemModel>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>

namespace servesim::gui {
namespace {

// The editable types and the keys of their parameters ("" where there is no second one).
struct Form {
  const char* type;
  const char* first;
  const char* second;
};

const Form kForms[] = {{"fixed", "value", ""},
                       {"uniform", "min", "max"},
                       {"normal", "mean", "std"},
                       {"lognormal", "mean", "std"},
                       {"exponential", "mean", ""}};
constexpr int kOtherIndex = sizeof kForms / sizeof kForms[0];  // "edit in JSON"

const Form* form_of(const QString& type) {
  for (const Form& f : kForms) {
    if (type == QLatin1String(f.type)) return &f;
  }
  return nullptr;
}

QDoubleSpinBox* parameter_box() {
  auto* box = new QDoubleSpinBox();
  box->setRange(0.0, 1e9);
  box->setDecimals(1);
  box->setKeyboardTracking(false);
  box->setSuffix(QStringLiteral(" tok"));
  return box;
}

// The type of a length as written: a bare number is "fixed"; an unsupported form is "".
QString type_of(const nlohmann::json& j) {
  if (j.is_number()) return QStringLiteral("fixed");
  if (!j.is_object() || !j.contains("type") || !j["type"].is_string()) return {};
  const QString type = QString::fromStdString(j["type"].get<std::string>());
  const Form* f = form_of(type);
  if (!f) return {};
  // lognormal by mu/sigma is the other parameterisation: left to the JSON.
  if (!j.contains(f->first) || (*f->second && !j.contains(f->second))) return {};
  return type;
}

double number_at(const nlohmann::json& j, const char* key, double fallback) {
  if (j.is_object() && j.contains(key) && j[key].is_number()) return j[key].get<double>();
  return fallback;
}

}  // namespace

LengthDistributionEdit::LengthDistributionEdit(QWidget* parent)
    : QWidget(parent),
      type_(new QComboBox(this)),
      first_label_(new QLabel(this)),
      first_(parameter_box()),
      second_label_(new QLabel(this)),
      second_(parameter_box()) {
  for (const Form& f : kForms) type_->addItem(QString::fromLatin1(f.type));
  type_->addItem(tr("edit in JSON"));
  // Shown for forms the field cannot edit, never chosen.
  if (auto* items = qobject_cast<QStandardItemModel*>(type_->model())) {
    items->item(kOtherIndex)->setEnabled(false);
  }
  type_->setToolTip(tr("Length distribution (docs/workloads.md)"));
  first_->setParent(this);
  second_->setParent(this);
  auto* layout = new QHBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(type_);
  layout->addWidget(first_label_);
  layout->addWidget(first_, 1);
  layout->addWidget(second_label_);
  layout->addWidget(second_, 1);
  connect(type_, &QComboBox::currentIndexChanged, this, &LengthDistributionEdit::on_type_changed);
  connect(first_, &QDoubleSpinBox::valueChanged, this, &LengthDistributionEdit::edited);
  connect(second_, &QDoubleSpinBox::valueChanged, this, &LengthDistributionEdit::edited);
  update_parameters();
}

bool LengthDistributionEdit::editable_form() const {
  return type_->currentIndex() != kOtherIndex;
}

void LengthDistributionEdit::set_value(const std::optional<nlohmann::json>& value) {
  const QSignalBlocker block_type(type_);
  const QSignalBlocker block_first(first_);
  const QSignalBlocker block_second(second_);
  const QString type = value ? type_of(*value) : QString();
  const Form* f = form_of(type);
  type_->setCurrentIndex(f ? static_cast<int>(f - kForms) : kOtherIndex);
  if (f && value->is_number()) {
    first_->setValue(value->get<double>());
  } else if (f) {
    first_->setValue(number_at(*value, f->first, 0.0));
    if (*f->second) second_->setValue(number_at(*value, f->second, 0.0));
  }
  update_parameters();
}

nlohmann::json LengthDistributionEdit::value(const std::optional<nlohmann::json>& current) const {
  const Form& f = kForms[std::min(type_->currentIndex(), kOtherIndex - 1)];
  // Whole numbers stay integers in the JSON, as people write them.
  auto number = [](double v) {
    return v == static_cast<double>(static_cast<int64_t>(v))
               ? nlohmann::json(static_cast<int64_t>(v))
               : nlohmann::json(v);
  };
  if (std::string(f.type) == "fixed") return number(first_->value());
  nlohmann::json j = nlohmann::json::object();
  if (current && current->is_object() && type_of(*current) == QLatin1String(f.type)) j = *current;
  j["type"] = f.type;
  j[f.first] = number(first_->value());
  if (*f.second) j[f.second] = number(second_->value());
  return j;
}

void LengthDistributionEdit::on_type_changed() {
  if (!editable_form()) {
    update_parameters();
    return;
  }
  // Parameters for the new type from the one figure every type has: a typical length.
  const Form& f = kForms[type_->currentIndex()];
  const double typical = std::max(1.0, first_->value());
  {
    const QSignalBlocker block_first(first_);
    const QSignalBlocker block_second(second_);
    const std::string type = f.type;
    if (type == "uniform") {
      first_->setValue(std::max(1.0, std::round(typical / 2)));
      second_->setValue(std::round(typical * 2));
    } else if (type == "normal") {
      second_->setValue(std::round(typical / 4));
    } else if (type == "lognormal") {
      second_->setValue(std::round(typical / 2));
    }
  }
  update_parameters();
  emit edited();
}

void LengthDistributionEdit::update_parameters() {
  const bool editable = editable_form();
  const Form* f = editable ? &kForms[type_->currentIndex()] : nullptr;
  first_label_->setText(f ? QString::fromLatin1(f->first) : QString());
  first_->setEnabled(editable);
  const bool two = f && *f->second;
  second_label_->setText(two ? QString::fromLatin1(f->second) : QString());
  second_label_->setVisible(two);
  second_->setVisible(two);
}

}  // namespace servesim::gui
