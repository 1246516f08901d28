#include "gui/scenario_editor.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDir>
#include <QDoubleSpinBox>
#include <QFileDialog>
#include <QFontDatabase>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QScrollArea>
#include <QSignalBlocker>
#include <QSpinBox>
#include <QSplitter>
#include <QTextBlock>
#include <QToolButton>
#include <QVBoxLayout>
#include <limits>
#include <utility>

#include "gui/error_style.h"
#include "gui/features_edit.h"
#include "gui/length_distribution_edit.h"
#include "gui/scenario_document.h"
#include "gui/service_edit.h"
#include "models/cuda_graph_mode.h"

namespace servesim::gui {
namespace {

constexpr int kMaxInt = std::numeric_limits<int>::max();
const char* const kArrivalTypeKey = "workload.arrival.type";
// A check box's value when the scenario lacks its key (a bool property; unset: checked).
const char* const kWhenAbsent = "servesim_when_absent";
// On a combo box: the entry that stands for the key's absence (the default is servesim's or
// vLLM's own); choosing it removes the key.
const char* const kAbsentEntry = "servesim_absent_entry";
const char* const kPrefixGroupsKey = "workload.shared_prefix.groups";
// Tokens of a shared prefix the form adds with its first group (a typical system prompt).
constexpr int kDefaultPrefixTokens = 512;

QSpinBox* int_box(int min, const QString& zero_text = {}) {
  auto* box = new QSpinBox();
  box->setRange(min, kMaxInt);
  box->setGroupSeparatorShown(false);
  if (!zero_text.isEmpty()) box->setSpecialValueText(zero_text);
  box->setKeyboardTracking(false);
  return box;
}

QDoubleSpinBox* double_box(double min, double max, double step, int decimals) {
  auto* box = new QDoubleSpinBox();
  box->setRange(min, max);
  box->setSingleStep(step);
  box->setDecimals(decimals);
  box->setKeyboardTracking(false);
  return box;
}

QComboBox* name_box(const QStringList& names) {
  auto* box = new QComboBox();
  box->setEditable(true);
  box->addItems(names);
  box->setInsertPolicy(QComboBox::NoInsert);
  box->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
  box->setMinimumContentsLength(14);
  return box;
}

}  // namespace

ScenarioEditor::ScenarioEditor(ScenarioDocument* document, QWidget* parent)
    : QWidget(parent),
      document_(document),
      error_(new QLabel(this)),
      text_(new QPlainTextEdit(this)) {
  // The groups in form order: field_keys() lists their fields in the order they are added.
  auto* form_box = new QGroupBox(tr("Deployment, engine, load"), this);
  auto* form = new QFormLayout(form_box);
  form->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
  add_deployment_fields(form_box, form);
  add_engine_fields(form_box, form);
  QGroupBox* workload_box = add_workload_group();
  add_slo_fields(form);
  lay_out(form_box, workload_box);
  connect(document_, &ScenarioDocument::changed, this, &ScenarioEditor::refresh);
  refresh();
}

// The model and GPU: catalog names to pick from, or files to browse for.
void ScenarioEditor::add_deployment_fields(QGroupBox* form_box, QFormLayout* form) {
  QStringList models;
  for (const ModelSpec& m : document_->catalog().models()) models << QString::fromStdString(m.name);
  QStringList gpus;
  for (const HardwareSpec& g : document_->catalog().gpus()) gpus << QString::fromStdString(g.name);

  auto with_browse = [this, form_box](QWidget* box, const std::string& key, const QString& title) {
    auto* row = new QWidget(form_box);
    auto* layout = new QHBoxLayout(row);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(box, 1);
    auto* browse = new QToolButton(row);
    browse->setText(tr("Browse…"));
    browse->setToolTip(title);
    connect(browse, &QToolButton::clicked, this, [this, key, title] { browse_file(key, title); });
    layout->addWidget(browse);
    return row;
  };

  auto* model = name_box(models);
  model->setToolTip(tr("Catalog name, or a model / Hugging Face config.json path"));
  form->addRow(tr("&Model"), with_browse(model, "model", tr("Choose a model or config.json file")));
  add_field("model", model, {QStringLiteral("--model"), QStringLiteral("unknown model")});

  auto* gpu = name_box(gpus);
  gpu->setToolTip(tr("Catalog name, or a GPU JSON path"));
  form->addRow(tr("&GPU"), with_browse(gpu, "gpu", tr("Choose a GPU JSON file")));
  add_field("gpu", gpu, {QStringLiteral("--gpu"), QStringLiteral("unknown GPU")});
}

// Parallelism and vLLM's engine flags.
void ScenarioEditor::add_engine_fields(QGroupBox* form_box, QFormLayout* form) {
  struct IntKnob {
    const char* key;
    QString label;
    int min;
    QString zero_text;
    QString tip;
  };
  const IntKnob ints[] = {
      {"parallel.tensor_parallel_size", tr("&TP size"), 1, {}, tr("--tensor-parallel-size")},
      {"parallel.pipeline_parallel_size", tr("&PP size"), 1, {}, tr("--pipeline-parallel-size")},
      {"parallel.data_parallel_size", tr("&DP replicas"), 1, {}, tr("--data-parallel-size")},
      {"engine.max_num_seqs", tr("max_num_&seqs"), 0, tr("vLLM default"), tr("--max-num-seqs")},
      {"engine.max_num_batched_tokens", tr("max_num_&batched_tokens"), 0, tr("vLLM default"),
       tr("--max-num-batched-tokens")},
      {"engine.max_model_len", tr("max_model_&len"), 0, tr("model's maximum"),
       tr("--max-model-len")},
  };
  for (const IntKnob& k : ints) {
    QSpinBox* box = int_box(k.min, k.zero_text);
    box->setToolTip(k.tip);
    form->addRow(k.label, box);
    const std::string key = k.key;
    const QString leaf = QString::fromStdString(key.substr(key.rfind('.') + 1));
    add_field(key, box, {leaf, k.tip});
  }

  QDoubleSpinBox* utilization = double_box(0.0, 1.0, 0.01, 3);
  utilization->setToolTip(tr("--gpu-memory-utilization"));
  form->addRow(tr("gpu_memory_&utilization"), utilization);
  add_field("engine.gpu_memory_utilization", utilization,
            {QStringLiteral("gpu_memory_utilization"), QStringLiteral("--gpu-memory-utilization")});

  auto* prefix = new QCheckBox(tr("enable_prefix_caching"), form_box);
  prefix->setToolTip(tr("--enable-prefix-caching"));
  form->addRow(QString(), prefix);
  add_field("engine.enable_prefix_caching", prefix,
            {QStringLiteral("enable_prefix_caching"), QStringLiteral("--enable-prefix-caching")});

  auto* async = new QCheckBox(tr("async_scheduling"), form_box);
  async->setToolTip(
      tr("--async-scheduling (vLLM 0.14 and later turn it on): host work overlaps the GPU's, "
         "a new request waits one step more; off by default (docs/scheduler.md)"));
  async->setProperty(kWhenAbsent, false);  // servesim's default, not vLLM 0.14's
  form->addRow(QString(), async);
  add_field("engine.async_scheduling", async,
            {QStringLiteral("async_scheduling"), QStringLiteral("--async-scheduling")});

  auto* graphs = new QComboBox();
  const QString release_default = tr("release default");
  graphs->addItem(release_default);
  for (CudaGraphMode mode : kAllCudaGraphModes) {
    const std::string_view name = cuda_graph_mode_name(mode);
    graphs->addItem(QString::fromUtf8(name.data(), static_cast<qsizetype>(name.size())));
  }
  graphs->setProperty(kAbsentEntry, release_default);
  graphs->setToolTip(
      tr("engine.cudagraph_mode (vLLM's compilation config, 0.10+): which steps replay CUDA "
         "graphs, their memory and the kernel launches of the rest (docs/cost-model.md)"));
  form->addRow(tr("CUDA &graphs"), graphs);
  add_field("engine.cudagraph_mode", graphs,
            {QStringLiteral("cudagraph_mode"), QStringLiteral("--cudagraph-mode")});

  // KV offload: 0 ("none") removes the key, so the scenario runs without a host tier.
  QDoubleSpinBox* offload = double_box(0.0, 1e5, 16, 1);
  offload->setSuffix(tr(" GiB"));
  offload->setSpecialValueText(tr("none"));
  offload->setToolTip(
      tr("engine.kv_offloading_size_gib: host memory for offloaded KV blocks, summed over the "
         "TP x PP ranks (vLLM --kv-offloading-size)"));
  form->addRow(tr("&KV offload"), offload);
  add_field("engine.kv_offloading_size_gib", offload,
            {QStringLiteral("kv_offloading"), QStringLiteral("--kv-offloading-size")});
}

// Arrivals, lengths, request count, shared prefixes and a benchmark's dataset.
QGroupBox* ScenarioEditor::add_workload_group() {
  auto* workload_box = new QGroupBox(tr("Workload"), this);
  auto* workload = new QFormLayout(workload_box);
  workload->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);

  auto* arrival = new QComboBox();
  arrival->addItems({QStringLiteral("poisson"), QStringLiteral("gamma"), QStringLiteral("constant"),
                     QStringLiteral("onoff"), QStringLiteral("closed"), QStringLiteral("stepped")});
  arrival->setToolTip(
      tr("workload.arrival.type: open loop (poisson, gamma, constant, onoff) "
         "or clients (closed, stepped)"));
  workload->addRow(tr("&Arrival"), arrival);
  add_field(kArrivalTypeKey, arrival,
            {QStringLiteral("arrival.type"), QStringLiteral("arrival: type"),
             QStringLiteral("arrival: unknown key")});

  QDoubleSpinBox* rate = double_box(0.0, 1e6, 0.5, 3);
  rate->setSuffix(tr(" req/s"));
  rate->setToolTip(tr("workload.arrival.rate_qps (inline open-loop workloads)"));
  workload->addRow(tr("Arrival &rate"), rate);
  add_field("workload.arrival.rate_qps", rate, {QStringLiteral("rate_qps")});

  QDoubleSpinBox* cv = double_box(0.0, 100.0, 0.1, 2);
  cv->setToolTip(
      tr("workload.arrival.cv: gamma gaps' coefficient of variation "
         "(> 1 burstier than Poisson)"));
  workload->addRow(tr("Gamma &CV"), cv);
  add_field("workload.arrival.cv", cv,
            {QStringLiteral("arrival.cv"), QStringLiteral("arrival: cv")});

  QSpinBox* clients = int_box(0);
  clients->setToolTip(tr("workload.arrival.clients (closed loop)"));
  workload->addRow(tr("Cl&ients"), clients);
  add_field("workload.arrival.clients", clients,
            {QStringLiteral("arrival.clients"), QStringLiteral("arrival: clients")});

  const std::pair<const char*, QString> lengths[] = {
      {"workload.prompt_tokens", tr("Prompt lengt&h")},
      {"workload.output_tokens", tr("Output le&ngth")}};
  for (const auto& [key, label] : lengths) {
    auto* length = new LengthDistributionEdit();
    length->setToolTip(QString::fromLatin1(key));
    workload->addRow(label, length);
    const QString leaf = QString::fromLatin1(key).section(QLatin1Char('.'), 1);
    add_field(key, length, {leaf + QLatin1Char('.'), leaf + QLatin1Char(':')});
  }

  QSpinBox* requests = int_box(0, tr("no cap"));
  requests->setToolTip(tr("workload.num_requests (0: no cap; then duration_s ends the run)"));
  workload->addRow(tr("Re&quests"), requests);
  add_field("workload.num_requests", requests, {QStringLiteral("num_requests")});

  QSpinBox* groups = int_box(0, tr("none"));
  groups->setToolTip(tr("workload.shared_prefix.groups: system prompts shared by requests"));
  workload->addRow(tr("Shared prefi&xes"), groups);
  add_field(kPrefixGroupsKey, groups,
            {QStringLiteral("shared_prefix.groups"), QStringLiteral("shared_prefix: groups")});

  QSpinBox* prefix_tokens = int_box(0);
  prefix_tokens->setSuffix(tr(" tok"));
  prefix_tokens->setToolTip(tr("workload.shared_prefix.tokens: length of each shared prefix"));
  workload->addRow(tr("Prefix to&kens"), prefix_tokens);
  add_field("workload.shared_prefix.tokens", prefix_tokens,
            {QStringLiteral("shared_prefix.tokens"), QStringLiteral("shared_prefix: tokens")});

  // A benchmark's dataset: 0 ("new each time") removes the key.
  QSpinBox* dataset = int_box(0, tr("new each time"));
  dataset->setMaximum(1000000);
  dataset->setToolTip(
      tr("workload.distinct_prompts: every request sends one of this many fixed prompts, as a "
         "benchmark's dataset does (aiperf's --num-dataset-entries); repeats hit the prefix "
         "cache"));
  workload->addRow(tr("Dataset prompts"), dataset);
  add_field("workload.distinct_prompts", dataset, {QStringLiteral("distinct_prompts")});
  return workload_box;
}

void ScenarioEditor::add_slo_fields(QFormLayout* form) {
  // SLOs in seconds, as the scenario keys them; "none" removes the key.
  const std::pair<const char*, QString> slos[] = {{"slo.ttft_s", tr("SLO TT&FT")},
                                                  {"slo.tpot_s", tr("SLO TP&OT")},
                                                  {"slo.e2e_s", tr("SLO &E2E")}};
  for (const auto& [key, label] : slos) {
    QDoubleSpinBox* box = double_box(0.0, 1e6, 0.01, 3);
    box->setSuffix(tr(" s"));
    box->setSpecialValueText(tr("none"));
    box->setToolTip(QString::fromLatin1(key));
    form->addRow(label, box);
    const QString leaf = QString::fromLatin1(key).section(QLatin1Char('.'), 1);
    add_field(key, box, {QStringLiteral("slo: ") + leaf, QStringLiteral("slo.") + leaf});
  }
}

// The forms (with the features and service groups) scroll above the error line; the JSON
// text below them.
void ScenarioEditor::lay_out(QGroupBox* form_box, QGroupBox* workload_box) {
  error_->setWordWrap(true);
  error_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  error_->setStyleSheet(error_text_style(/*bold=*/false));
  error_->setObjectName(QStringLiteral("validation_error"));

  text_->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
  text_->setLineWrapMode(QPlainTextEdit::NoWrap);
  text_->setTabChangesFocus(true);
  connect(text_, &QPlainTextEdit::textChanged, this,
          [this] { document_->set_text(text_->toPlainText()); });

  auto* forms = new QWidget(this);
  auto* forms_layout = new QVBoxLayout(forms);
  forms_layout->setContentsMargins(0, 0, 0, 0);
  forms_layout->addWidget(form_box);
  features_ = new FeaturesEdit(document_, forms);
  forms_layout->addWidget(features_);
  forms_layout->addWidget(workload_box);
  service_ = new ServiceEdit(document_, forms);
  forms_layout->addWidget(service_);
  // The form scrolls, so a short window still leaves room for the JSON text; the error stays
  // in view below it.
  auto* form_scroll = new QScrollArea(this);
  form_scroll->setWidget(forms);
  form_scroll->setWidgetResizable(true);
  form_scroll->setFrameShape(QFrame::NoFrame);
  auto* upper = new QWidget(this);
  auto* upper_layout = new QVBoxLayout(upper);
  upper_layout->setContentsMargins(0, 0, 0, 0);
  upper_layout->addWidget(form_scroll, 1);
  upper_layout->addWidget(error_);
  auto* splitter = new QSplitter(Qt::Vertical, this);
  splitter->addWidget(upper);
  splitter->addWidget(text_);
  splitter->setStretchFactor(0, 3);
  splitter->setStretchFactor(1, 2);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(4, 4, 4, 4);
  layout->addWidget(splitter);
}

void ScenarioEditor::add_field(const std::string& key, QWidget* widget, QStringList needles) {
  widget->setObjectName(QString::fromStdString(key));
  fields_.push_back({key, widget, std::move(needles), widget->toolTip()});
  const Field field = fields_.back();
  if (auto* length = qobject_cast<LengthDistributionEdit*>(widget)) {
    connect(length, &LengthDistributionEdit::edited, this, [this, field] { write_field(field); });
  } else if (auto* combo = qobject_cast<QComboBox*>(widget)) {
    connect(combo, &QComboBox::currentTextChanged, this, [this, field] { write_field(field); });
  } else if (auto* spin = qobject_cast<QSpinBox*>(widget)) {
    connect(spin, &QSpinBox::valueChanged, this, [this, field] { write_field(field); });
  } else if (auto* dspin = qobject_cast<QDoubleSpinBox*>(widget)) {
    connect(dspin, &QDoubleSpinBox::valueChanged, this, [this, field] { write_field(field); });
  } else if (auto* check = qobject_cast<QCheckBox*>(widget)) {
    connect(check, &QCheckBox::toggled, this, [this, field] { write_field(field); });
  }
}

QStringList ScenarioEditor::field_keys() const {
  QStringList keys;
  for (const Field& f : fields_) keys << QString::fromStdString(f.key);
  return keys;
}

QWidget* ScenarioEditor::field(const QString& key) const {
  for (const Field& f : fields_) {
    if (QString::fromStdString(f.key) == key) return f.widget;
  }
  return nullptr;
}

QStringList ScenarioEditor::invalid_fields() const {
  QStringList keys;
  for (const Field& f : fields_) {
    if (f.widget->property("invalid").toBool()) keys << QString::fromStdString(f.key);
  }
  return keys;
}

QString ScenarioEditor::error_text() const {
  return error_->text();
}

void ScenarioEditor::write_field(const Field& field) {
  if (field.key == kArrivalTypeKey) {
    write_arrival_type(qobject_cast<QComboBox*>(field.widget)->currentText());
    return;
  }
  if (field.key == kPrefixGroupsKey) {
    write_prefix_groups(qobject_cast<QSpinBox*>(field.widget)->value());
    return;
  }
  std::optional<nlohmann::json> value;
  if (auto* length = qobject_cast<LengthDistributionEdit*>(field.widget)) {
    value = length->value(document_->value(field.key));
  } else if (auto* combo = qobject_cast<QComboBox*>(field.widget)) {
    if (combo->currentText() != combo->property(kAbsentEntry).toString()) {
      value = combo->currentText().toStdString();
    }
  } else if (auto* spin = qobject_cast<QSpinBox*>(field.widget)) {
    // 0 on a box with a special text means "the default": the key is removed.
    if (spin->value() != 0 || spin->specialValueText().isEmpty()) value = spin->value();
  } else if (auto* dspin = qobject_cast<QDoubleSpinBox*>(field.widget)) {
    if (dspin->value() != dspin->minimum() || dspin->specialValueText().isEmpty()) {
      value = dspin->value();
    }
  } else if (auto* check = qobject_cast<QCheckBox*>(field.widget)) {
    value = check->isChecked();
  }
  document_->set_value(field.key, value);
}

void ScenarioEditor::write_arrival_type(const QString& type) {
  const std::optional<nlohmann::json> old = document_->value("workload.arrival");
  auto old_number = [&old](const char* key, const nlohmann::json& fallback) {
    return old && old->contains(key) && (*old)[key].is_number() ? (*old)[key] : fallback;
  };
  // Each process gets the keys it requires (docs/workloads.md), carrying over the rate or the
  // think time where both processes have one, so a switch back and forth loses little.
  nlohmann::json arrival = {{"type", type.toStdString()}};
  if (type == QLatin1String("closed") || type == QLatin1String("stepped")) {
    if (type == QLatin1String("closed")) {
      arrival["clients"] = old_number("clients", 16);
    } else {
      arrival["steps"] = {1, 2, 4, 8, 16};
      arrival["step_duration_s"] = 60;
    }
    if (old && old->contains("think_time_s")) arrival["think_time_s"] = (*old)["think_time_s"];
  } else {
    arrival["rate_qps"] = old_number("rate_qps", 1);
    if (type == QLatin1String("gamma")) arrival["cv"] = old_number("cv", 2);
    if (type == QLatin1String("onoff")) {
      arrival["on_s"] = old_number("on_s", 10);
      arrival["off_s"] = old_number("off_s", 50);
    }
  }
  document_->set_value("workload.arrival", arrival);
}

void ScenarioEditor::write_prefix_groups(int groups) {
  if (groups == 0) {
    document_->set_value("workload.shared_prefix", std::nullopt);
    return;
  }
  nlohmann::json prefix = document_->value("workload.shared_prefix").value_or(nlohmann::json());
  if (!prefix.is_object()) prefix = {{"tokens", kDefaultPrefixTokens}};
  prefix["groups"] = groups;
  document_->set_value("workload.shared_prefix", prefix);
}

bool ScenarioEditor::field_applies(const Field& field) const {
  if (!document_->is_json_object()) return false;
  if (field.key.rfind("workload.", 0) != 0) return true;
  // A workload in its own file (a path) is edited there.
  const std::optional<nlohmann::json> workload = document_->value("workload");
  if (!workload || !workload->is_object()) return false;
  if (field.key == kArrivalTypeKey) return document_->value("workload.arrival").has_value();
  // A process's parameters apply when it has them.
  if (field.key == "workload.arrival.rate_qps" || field.key == "workload.arrival.cv" ||
      field.key == "workload.arrival.clients") {
    return document_->value(field.key).has_value();
  }
  if (field.key == "workload.shared_prefix.tokens") {
    return document_->value("workload.shared_prefix").has_value();
  }
  return true;
}

void ScenarioEditor::browse_file(const std::string& key, const QString& title) {
  const QString file = QFileDialog::getOpenFileName(this, title, document_->base_dir(),
                                                    tr("JSON files (*.json);;All files (*)"));
  if (file.isEmpty()) return;
  document_->set_value(key, QDir(document_->base_dir()).relativeFilePath(file).toStdString());
}

void ScenarioEditor::refresh() {
  const bool editable = document_->is_json_object();
  const QString error = document_->error();
  for (const Field& f : fields_) {
    const QSignalBlocker block(f.widget);
    const std::optional<nlohmann::json> v = document_->value(f.key);
    f.widget->setEnabled(editable && field_applies(f));
    if (auto* length = qobject_cast<LengthDistributionEdit*>(f.widget)) {
      length->set_value(v);
    } else if (auto* combo = qobject_cast<QComboBox*>(f.widget)) {
      const QString text = v && v->is_string() ? QString::fromStdString(v->get<std::string>()) : "";
      if (combo->isEditable() && combo->currentText() != text) combo->setEditText(text);
      const QVariant absent = combo->property(kAbsentEntry);
      if (!combo->isEditable()) {
        combo->setCurrentIndex(combo->findText(!v && absent.isValid() ? absent.toString() : text));
      }
    } else if (auto* spin = qobject_cast<QSpinBox*>(f.widget)) {
      spin->setValue(v && v->is_number_integer() ? v->get<int>() : spin->minimum());
    } else if (auto* dspin = qobject_cast<QDoubleSpinBox*>(f.widget)) {
      const double fallback = f.key == "engine.gpu_memory_utilization" ? 0.9 : 0.0;
      dspin->setValue(v && v->is_number() ? v->get<double>() : fallback);
    } else if (auto* check = qobject_cast<QCheckBox*>(f.widget)) {
      // Absent: the box's kWhenAbsent, else on (vLLM's defaults, such as prefix caching).
      const QVariant absent = check->property(kWhenAbsent);
      check->setChecked(v && v->is_boolean() ? v->get<bool>()
                                             : !absent.isValid() || absent.toBool());
    }
    bool invalid = false;
    for (const QString& needle : f.needles) invalid = invalid || error.contains(needle);
    f.widget->setProperty("invalid", invalid);
    QString style = invalid ? invalid_field_style() : QString();
    // A composite field frames its inputs, not its labels.
    if (invalid && qobject_cast<LengthDistributionEdit*>(f.widget)) {
      style = QStringLiteral("QComboBox, QDoubleSpinBox { %1 }").arg(style);
    }
    f.widget->setStyleSheet(style);
    f.widget->setToolTip(invalid ? error : f.tip);
  }

  error_->setText(error);
  error_->setVisible(!error.isEmpty());

  if (text_->toPlainText() != document_->text()) {
    const QSignalBlocker block(text_);
    text_->setPlainText(document_->text());
  }
  QList<QTextEdit::ExtraSelection> marks;
  if (document_->error_line() > 0) {
    QTextEdit::ExtraSelection mark;
    mark.format.setBackground(QColor(0xff, 0xd6, 0xd6));
    mark.format.setProperty(QTextFormat::FullWidthSelection, true);
    mark.cursor =
        QTextCursor(text_->document()->findBlockByLineNumber(document_->error_line() - 1));
    marks << mark;
  }
  text_->setExtraSelections(marks);
}

}  // namespace servesim::gui
