#include "gui/service_edit.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QSignalBlocker>
#include <QSpinBox>
#include <QTableWidget>
#include <limits>

#include "gui/error_style.h"
#include "gui/scenario_document.h"

namespace servesim::gui {
namespace {

const char* const kService = "service";
const char* const kGateway = "service.gateway";
const char* const kStages = "service.stages";
const char* const kRetry = "service.client.retry";
const char* const kRetryAttempts = "service.client.retry.max_attempts";
const char* const kClientMachine = "service.client.machine";
const char* const kClientThreads = "service.client.machine.threads";
const char* const kStdSuffix = ":std";
constexpr double kMs = 1e3;  // shown per second
constexpr double kUs = 1e6;
// The first retry's backoff cap the form writes with a first retry (a typical client's 0.5 s).
constexpr double kDefaultBackoffS = 0.5;
enum StageColumn { kStageName, kStageWorkers, kStageMeanMs, kStageStdMs, kStageColumns };

// "service.gateway.workers" -> {"service.gateway: workers", "service.gateway.workers"}: how
// the scenario's errors name a key.
QStringList needles_of(const std::string& key) {
  const QString dotted = QString::fromStdString(key.substr(0, key.find(':')));
  const int dot = dotted.lastIndexOf(QLatin1Char('.'));
  return {dotted.left(dot) + QStringLiteral(": ") + dotted.mid(dot + 1), dotted};
}

}  // namespace

ServiceEdit::ServiceEdit(ScenarioDocument* document, QWidget* parent)
    : QGroupBox(tr("Service"), parent),
      document_(document),
      mode_(new QComboBox(this)),
      gateway_(new QCheckBox(tr("gateway in front of the API server"), this)),
      stages_(new QTableWidget(0, kStageColumns, this)),
      form_(new QFormLayout(this)) {
  form_->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
  mode_->addItems({tr("served through vLLM's API server (default)"), tr("engine only (\"none\")"),
                   tr("custom service path")});
  mode_->setObjectName(QString::fromLatin1(kService));
  mode_->setToolTip(
      tr("service: no key = vLLM's API server, \"none\" = the engine alone (an in-process "
         "benchmark), an object = the path below"));
  form_->addRow(tr("Ser&ved"), mode_);
  connect(mode_, &QComboBox::activated, this, &ServiceEdit::write_mode);
  build_fields();
  connect(document_, &ScenarioDocument::changed, this, &ServiceEdit::refresh);
  refresh();
}

void ServiceEdit::build_fields() {
  add_field("service.network.rtt_s", Kind::kTimeMean, kMs, tr("Network RTT"), tr(" ms"),
            tr("service.network.rtt_s: mean round trip"));
  add_field("service.network.rtt_s:std", Kind::kTimeStd, kMs, tr("  RTT std"), tr(" ms"),
            tr("service.network.rtt_s: std (0 = every request the same)"));
  gateway_->setObjectName(QString::fromLatin1(kGateway));
  gateway_->setToolTip(tr("service.gateway: auth, routing, rate limits"));
  form_->addRow(QString(), gateway_);
  connect(gateway_, &QCheckBox::toggled, this, &ServiceEdit::write_gateway);
  add_field("service.gateway.workers", Kind::kInt, 1, tr("  Gateway workers"), {},
            tr("service.gateway.workers: requests served at once"), 1);
  add_field("service.gateway.request_s", Kind::kTimeMean, kMs, tr("  Gateway time"), tr(" ms"),
            tr("service.gateway.request_s: mean per request"));
  add_field("service.gateway.request_s:std", Kind::kTimeStd, kMs, tr("  Gateway time std"),
            tr(" ms"), tr("service.gateway.request_s: std"));
  add_field("service.gateway.rate_limit.requests_per_s", Kind::kNumber, 1, tr("  Rate limit"),
            tr(" req/s"), tr("service.gateway.rate_limit.requests_per_s (0: none)"));
  add_field("service.gateway.rate_limit.burst", Kind::kNumber, 1, tr("  Burst"), tr(" req"),
            tr("service.gateway.rate_limit.burst (0: the rate's default)"));
  add_field("service.gateway.rate_limit.tokens_per_min", Kind::kNumber, 1, tr("  Token limit"),
            tr(" tok/min"), tr("service.gateway.rate_limit.tokens_per_min (0: none)"));
  add_field("service.frontend.workers", Kind::kInt, 1, tr("API server processes"), {},
            tr("service.frontend.workers (--api-server-count)"), 1);
  add_field("service.frontend.request_s", Kind::kTimeMean, kMs, tr("  Intake"), tr(" ms"),
            tr("service.frontend.request_s: parse, chat template, per request"));
  add_field("service.frontend.per_prompt_token_s", Kind::kNumber, kUs, tr("  Per prompt token"),
            tr(" µs"), tr("service.frontend.per_prompt_token_s: tokenisation"));
  add_field("service.frontend.step_s", Kind::kTimeMean, kMs, tr("  Per engine step"), tr(" ms"),
            tr("service.frontend.step_s: each step's output batch"));
  add_field("service.frontend.per_output_token_s", Kind::kNumber, kUs, tr("  Per output token"),
            tr(" µs"), tr("service.frontend.per_output_token_s: detokenise + stream"));
  add_field("service.frontend.cv", Kind::kNumber, 1, tr("  CV"), {},
            tr("service.frontend.cv: spread of each job's time (lognormal)"));

  stages_->setObjectName(QString::fromLatin1(kStages));
  stages_->setHorizontalHeaderLabels({tr("name"), tr("workers"), tr("mean ms"), tr("std ms")});
  stages_->horizontalHeader()->setSectionResizeMode(QHeaderView::Stretch);
  stages_->verticalHeader()->hide();
  stages_->setMinimumHeight(90);
  stages_->setToolTip(tr("service.stages: pre-model stages (retrieval, rerank, …), in order"));
  connect(stages_, &QTableWidget::cellChanged, this, &ServiceEdit::write_stages);
  auto* add = new QPushButton(tr("Add stage"), this);
  add->setObjectName(QStringLiteral("add_stage"));
  connect(add, &QPushButton::clicked, this, &ServiceEdit::add_stage);
  auto* remove = new QPushButton(tr("Remove stage"), this);
  remove->setObjectName(QStringLiteral("remove_stage"));
  connect(remove, &QPushButton::clicked, this, [this] { remove_stage(stages_->currentRow()); });
  auto* buttons = new QWidget(this);
  auto* row = new QHBoxLayout(buttons);
  row->setContentsMargins(0, 0, 0, 0);
  row->addWidget(add);
  row->addWidget(remove);
  form_->addRow(tr("Pre-model stages"), buttons);
  form_->addRow(stages_);

  add_field("service.client.timeout_s", Kind::kNumber, 1, tr("Client timeout"), tr(" s"),
            tr("service.client.timeout_s (0: never)"));
  add_field(kRetryAttempts, Kind::kInt, 1, tr("  Max attempts"), {},
            tr("service.client.retry.max_attempts (1: no retries)"), 1);
  add_field("service.client.retry.initial_backoff_s", Kind::kNumber, 1, tr("  Backoff"), tr(" s"),
            tr("service.client.retry.initial_backoff_s: the first retry's cap"));
  add_field(kClientThreads, Kind::kInt, 1, tr("Load generator threads"), {},
            tr("service.client.machine.threads: the client's own CPU, measured costs per send "
               "and per streamed chunk (ideal: not modelled, the block removed)"),
            0);
  qobject_cast<QSpinBox*>(field(QString::fromLatin1(kClientThreads)))
      ->setSpecialValueText(tr("ideal"));
}

void ServiceEdit::add_field(const std::string& key, Kind kind, double scale, const QString& label,
                            const QString& suffix, const QString& tip, double min) {
  QWidget* widget = nullptr;
  if (kind == Kind::kInt) {
    auto* box = new QSpinBox(this);
    box->setRange(static_cast<int>(min), std::numeric_limits<int>::max());
    box->setKeyboardTracking(false);
    widget = box;
  } else {
    auto* box = new QDoubleSpinBox(this);
    box->setRange(min, 1e12);
    box->setDecimals(3);
    box->setSuffix(suffix);
    box->setKeyboardTracking(false);
    widget = box;
  }
  widget->setObjectName(QString::fromStdString(key));
  widget->setToolTip(tip);
  form_->addRow(label, widget);
  fields_.push_back({key, kind, scale, widget, tip});
  const Field field = fields_.back();
  if (auto* spin = qobject_cast<QSpinBox*>(widget)) {
    connect(spin, &QSpinBox::valueChanged, this, [this, field] { write_field(field); });
  } else if (auto* dspin = qobject_cast<QDoubleSpinBox*>(widget)) {
    connect(dspin, &QDoubleSpinBox::valueChanged, this, [this, field] { write_field(field); });
  }
}

ServiceEdit::Mode ServiceEdit::mode() const {
  const std::optional<nlohmann::json> service = document_->value(kService);
  if (!service) return kDefaultFrontend;
  return service->is_object() ? kCustom : kEngineOnly;
}

QWidget* ServiceEdit::field(const QString& key) const {
  if (key == QLatin1String(kService)) return mode_;
  if (key == QLatin1String(kGateway)) return gateway_;
  if (key == QLatin1String(kStages)) return stages_;
  for (const Field& f : fields_) {
    if (QString::fromStdString(f.key) == key) return f.widget;
  }
  return nullptr;
}

QStringList ServiceEdit::field_keys() const {
  QStringList keys{QString::fromLatin1(kService), QString::fromLatin1(kGateway),
                   QString::fromLatin1(kStages)};
  for (const Field& f : fields_) keys << QString::fromStdString(f.key);
  return keys;
}

QStringList ServiceEdit::invalid_fields() const {
  QStringList keys;
  for (const QString& key : field_keys()) {
    if (field(key)->property("invalid").toBool()) keys << key;
  }
  return keys;
}

std::optional<double> ServiceEdit::mean_s(const nlohmann::json& time) {
  if (time.is_number()) return time.get<double>();
  if (!time.is_object()) return std::nullopt;
  const std::string type = time.value("type", std::string());
  if (type == "fixed" && time.contains("value") && time["value"].is_number()) {
    return time["value"].get<double>();
  }
  if ((type == "lognormal" || type == "normal") && time.contains("mean") &&
      time["mean"].is_number()) {
    return time["mean"].get<double>();
  }
  return std::nullopt;
}

double ServiceEdit::std_s(const nlohmann::json& time) {
  return time.is_object() && time.contains("std") && time["std"].is_number()
             ? time["std"].get<double>()
             : 0.0;
}

nlohmann::json ServiceEdit::time_json(double mean_s, double std_s,
                                      const std::optional<nlohmann::json>& current) {
  if (std_s <= 0.0) return mean_s;
  nlohmann::json time = {{"type", "lognormal"}};
  if (current && current->is_object() && current->contains("std")) time = *current;
  time["mean"] = mean_s;
  time["std"] = std_s;
  return time;
}

void ServiceEdit::write_mode(int index) {
  if (index == kDefaultFrontend) document_->set_value(kService, std::nullopt);
  if (index == kEngineOnly) document_->set_value(kService, "none");
  if (index == kCustom && mode() != kCustom) {
    document_->set_value(kService, nlohmann::json::object());
  }
}

void ServiceEdit::write_field(const Field& field) {
  const std::string key = field.key.substr(0, field.key.find(':'));
  if (field.kind == Kind::kInt) {
    const int value = qobject_cast<QSpinBox*>(field.widget)->value();
    if (key == kRetryAttempts) {
      write_retry_attempts(value);
    } else if (key == kClientThreads) {
      write_client_threads(value);
    } else {
      document_->set_value(key, value);
    }
    return;
  }
  const double shown = qobject_cast<QDoubleSpinBox*>(field.widget)->value();
  if (field.kind == Kind::kNumber) {
    if (shown != 0.0) {
      document_->set_value(key, shown / field.scale);
      return;
    }
    document_->set_value(key, std::nullopt);
    // An emptied rate limit or client block goes too (an empty gateway is a gateway: kept).
    const std::string parent = key.substr(0, key.rfind('.'));
    const std::optional<nlohmann::json> rest = document_->value(parent);
    if (parent != kGateway && rest && rest->is_object() && rest->empty()) {
      document_->set_value(parent, std::nullopt);
    }
    return;
  }
  const std::optional<nlohmann::json> current = document_->value(key);
  auto* std_box =
      qobject_cast<QDoubleSpinBox*>(this->field(QString::fromStdString(key) + kStdSuffix));
  auto* mean_box = qobject_cast<QDoubleSpinBox*>(this->field(QString::fromStdString(key)));
  const double std = std_box ? std_box->value() / field.scale : (current ? std_s(*current) : 0.0);
  document_->set_value(key, time_json(mean_box->value() / field.scale, std, current));
}

void ServiceEdit::write_client_threads(int threads) {
  if (threads > 0) {
    document_->set_value(kClientThreads, threads);
    return;
  }
  // "ideal": no client machine, and no client block left empty by its removal.
  document_->set_value(kClientMachine, std::nullopt);
  const std::optional<nlohmann::json> client = document_->value("service.client");
  if (client && client->is_object() && client->empty()) {
    document_->set_value("service.client", std::nullopt);
  }
}

void ServiceEdit::write_gateway(bool on) {
  if (!on) {
    document_->set_value(kGateway, std::nullopt);
  } else if (!document_->value(kGateway)) {
    document_->set_value(kGateway, nlohmann::json{{"workers", 1}});
  }
}

void ServiceEdit::write_retry_attempts(int attempts) {
  if (attempts <= 1) {
    document_->set_value(kRetry, std::nullopt);
    const std::optional<nlohmann::json> client = document_->value("service.client");
    if (client && client->is_object() && client->empty()) {
      document_->set_value("service.client", std::nullopt);
    }
    return;
  }
  nlohmann::json retry = document_->value(kRetry).value_or(nlohmann::json::object());
  if (!retry.is_object()) retry = nlohmann::json::object();
  retry["max_attempts"] = attempts;
  if (!retry.contains("initial_backoff_s")) retry["initial_backoff_s"] = kDefaultBackoffS;
  document_->set_value(kRetry, retry);
}

void ServiceEdit::write_stages() {
  const std::optional<nlohmann::json> old = document_->value(kStages);
  nlohmann::json stages = nlohmann::json::array();
  for (int r = 0; r < stages_->rowCount(); ++r) {
    const bool had = old && old->is_array() && r < static_cast<int>(old->size());
    nlohmann::json stage = had ? (*old)[static_cast<size_t>(r)] : nlohmann::json::object();
    if (!stage.is_object()) stage = nlohmann::json::object();
    auto cell = [this, r](int column) { return stages_->item(r, column)->data(Qt::EditRole); };
    stage["name"] = cell(kStageName).toString().toStdString();
    stage["workers"] = cell(kStageWorkers).toInt();
    const std::optional<nlohmann::json> time =
        stage.contains("request_s") ? std::optional(stage["request_s"]) : std::nullopt;
    if (!time || mean_s(*time)) {
      stage["request_s"] =
          time_json(cell(kStageMeanMs).toDouble() / kMs, cell(kStageStdMs).toDouble() / kMs, time);
    }
    stages.push_back(stage);
  }
  document_->set_value(kStages, stages.empty() ? std::nullopt : std::optional(stages));
}

void ServiceEdit::add_stage() {
  nlohmann::json stages = document_->value(kStages).value_or(nlohmann::json::array());
  if (!stages.is_array()) return;
  // A 10 ms stage on one worker: a placeholder the user renames and times.
  stages.push_back(
      {{"name", "stage" + std::to_string(stages.size() + 1)}, {"workers", 1}, {"request_s", 0.01}});
  document_->set_value(kStages, stages);
}

void ServiceEdit::remove_stage(int row) {
  nlohmann::json stages = document_->value(kStages).value_or(nlohmann::json::array());
  if (!stages.is_array() || row < 0 || row >= static_cast<int>(stages.size())) return;
  stages.erase(stages.begin() + row);
  document_->set_value(kStages, stages.empty() ? std::nullopt : std::optional(stages));
}

bool ServiceEdit::field_applies(const Field& field) const {
  if (!document_->is_json_object() || mode() != kCustom) return false;
  const std::string key = field.key.substr(0, field.key.find(':'));
  if (key.rfind(std::string(kGateway) + ".", 0) == 0 && !document_->value(kGateway)) return false;
  if (key == "service.client.retry.initial_backoff_s" && !document_->value(kRetry)) return false;
  const std::optional<nlohmann::json> v = document_->value(key);
  const bool is_time = field.kind == Kind::kTimeMean || field.kind == Kind::kTimeStd;
  return !is_time || !v || mean_s(*v).has_value();
}

void ServiceEdit::refresh() {
  {
    const QSignalBlocker block(mode_);
    mode_->setCurrentIndex(mode());
    mode_->setEnabled(document_->is_json_object());
  }
  mark_invalid(mode_, {QStringLiteral("service: must be")}, mode_->toolTip());
  {
    const QSignalBlocker block(gateway_);
    gateway_->setChecked(document_->value(kGateway).has_value());
    gateway_->setEnabled(document_->is_json_object() && mode() == kCustom);
  }
  for (const Field& f : fields_) {
    refresh_field(f);
    mark_invalid(f.widget, needles_of(f.key), f.tip);
  }
  refresh_stages();
  mark_invalid(stages_, {QString::fromLatin1(kStages)}, stages_->toolTip());
}

void ServiceEdit::refresh_field(const Field& field) {
  const QSignalBlocker block(field.widget);
  field.widget->setEnabled(field_applies(field));
  const std::optional<nlohmann::json> v =
      document_->value(field.key.substr(0, field.key.find(':')));
  if (auto* spin = qobject_cast<QSpinBox*>(field.widget)) {
    spin->setValue(v && v->is_number_integer() ? v->get<int>() : spin->minimum());
    return;
  }
  auto* box = qobject_cast<QDoubleSpinBox*>(field.widget);
  double seconds = 0.0;
  if (v && field.kind == Kind::kNumber && v->is_number()) seconds = v->get<double>();
  if (v && field.kind == Kind::kTimeMean) seconds = mean_s(*v).value_or(0.0);
  if (v && field.kind == Kind::kTimeStd) seconds = std_s(*v);
  box->setValue(seconds * field.scale);
  if (!field_applies(field) && v && !mean_s(*v) && field.kind != Kind::kNumber) {
    box->setSpecialValueText(tr("edit in JSON"));
    box->setValue(box->minimum());
  } else {
    box->setSpecialValueText({});
  }
}

void ServiceEdit::refresh_stages() {
  const QSignalBlocker block(stages_);
  const std::optional<nlohmann::json> stages = document_->value(kStages);
  const int rows = stages && stages->is_array() ? static_cast<int>(stages->size()) : 0;
  stages_->setRowCount(rows);
  for (int r = 0; r < rows; ++r) {
    const nlohmann::json& stage = (*stages)[static_cast<size_t>(r)];
    const bool object = stage.is_object();
    const nlohmann::json time =
        object ? stage.value("request_s", nlohmann::json(0.0)) : nlohmann::json(0.0);
    const std::optional<double> mean = mean_s(time);
    const QVariant values[kStageColumns] = {
        QString::fromStdString(object ? stage.value("name", std::string()) : std::string()),
        object ? stage.value("workers", 1) : 1, mean.value_or(0.0) * kMs, std_s(time) * kMs};
    for (int c = 0; c < kStageColumns; ++c) {
      auto* item = new QTableWidgetItem();
      item->setData(Qt::EditRole, values[c]);
      // A time the columns cannot show (uniform, say) is edited in the JSON.
      if (c >= kStageMeanMs && !mean) {
        item->setFlags(item->flags() & ~Qt::ItemIsEditable);
        item->setToolTip(tr("edit in JSON"));
      }
      stages_->setItem(r, c, item);
    }
  }
  stages_->setEnabled(document_->is_json_object() && mode() == kCustom);
}

void ServiceEdit::mark_invalid(QWidget* widget, const QStringList& needles, const QString& tip) {
  const QString error = document_->error();
  bool invalid = false;
  for (const QString& needle : needles) invalid = invalid || error.contains(needle);
  widget->setProperty("invalid", invalid);
  widget->setStyleSheet(invalid ? invalid_field_style() : QString());
  widget->setToolTip(invalid ? error : tip);
}

}  // namespace servesim::gui
