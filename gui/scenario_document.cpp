#include "gui/scenario_document.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <algorithm>

#include "models/config_error.h"

namespace servesim::gui {
namespace {

std::vector<std::string> split_path(const std::string& dotted) {
  std::vector<std::string> keys;
  size_t start = 0;
  while (true) {
    const size_t dot = dotted.find('.', start);
    keys.push_back(dotted.substr(start, dot - start));
    if (dot == std::string::npos) return keys;
    start = dot + 1;
  }
}

}  // namespace

ScenarioDocument::ScenarioDocument(QObject* parent) : QObject(parent) {
  base_dir_ = QDir::currentPath();
  validate();
}

bool ScenarioDocument::read_file(const QString& path, QString* text, QString* error) const {
  QFile file(path);
  if (!file.open(QIODevice::ReadOnly)) {
    if (error) *error = QStringLiteral("cannot open '%1': %2").arg(path, file.errorString());
    return false;
  }
  *text = QString::fromUtf8(file.readAll());
  return true;
}

bool ScenarioDocument::load(const QString& path, QString* error) {
  QString text;
  if (!read_file(path, &text, error)) return false;
  path_ = QFileInfo(path).absoluteFilePath();
  base_dir_ = QFileInfo(path_).absolutePath();
  text_ = text;
  modified_ = false;
  validate();
  emit changed();
  return true;
}

bool ScenarioDocument::load_template(const QString& path, QString* error) {
  QString text;
  if (!read_file(path, &text, error)) return false;
  path_.clear();
  base_dir_ = QFileInfo(path).absolutePath();
  text_ = text;
  modified_ = false;
  validate();
  emit changed();
  return true;
}

bool ScenarioDocument::save(const QString& path, QString* error) {
  QFile file(path);
  if (!file.open(QIODevice::WriteOnly | QIODevice::Truncate)) {
    if (error) *error = QStringLiteral("cannot write '%1': %2").arg(path, file.errorString());
    return false;
  }
  const QByteArray bytes = text_.toUtf8();
  if (file.write(bytes) != bytes.size() || !file.flush()) {
    if (error) *error = QStringLiteral("cannot write '%1': %2").arg(path, file.errorString());
    return false;
  }
  const QString new_base = QFileInfo(path).absolutePath();
  const bool base_moved = new_base != base_dir_;
  path_ = QFileInfo(path).absoluteFilePath();
  base_dir_ = new_base;
  modified_ = false;
  // Relative model, GPU and workload paths now resolve against another folder.
  if (base_moved) validate();
  emit changed();
  return true;
}

void ScenarioDocument::set_text(const QString& text) {
  if (text == text_) return;
  text_ = text;
  modified_ = true;
  validate();
  emit changed();
}

std::optional<nlohmann::json> ScenarioDocument::json() const {
  if (!json_) return std::nullopt;
  return nlohmann::json::parse(json_->dump());
}

QString ScenarioDocument::origin() const {
  return path_.isEmpty() ? QStringLiteral("untitled") : QFileInfo(path_).fileName();
}

std::optional<nlohmann::json> ScenarioDocument::value(const std::string& dotted_path) const {
  if (!json_) return std::nullopt;
  const nlohmann::ordered_json* node = &*json_;
  for (const std::string& key : split_path(dotted_path)) {
    if (!node->is_object()) return std::nullopt;
    const auto it = node->find(key);
    if (it == node->end()) return std::nullopt;
    node = &*it;
  }
  return nlohmann::json::parse(node->dump());
}

void ScenarioDocument::set_value(const std::string& dotted_path,
                                 const std::optional<nlohmann::json>& value) {
  if (!json_) return;
  nlohmann::ordered_json edited = *json_;
  const std::vector<std::string> keys = split_path(dotted_path);
  nlohmann::ordered_json* node = &edited;
  for (size_t i = 0; i + 1 < keys.size(); ++i) {
    auto it = node->find(keys[i]);
    if (it == node->end()) {
      if (!value) return;  // removing a key under a missing object: nothing to do
      (*node)[keys[i]] = nlohmann::ordered_json::object();
      it = node->find(keys[i]);
    }
    if (!it->is_object()) return;
    node = &*it;
  }
  if (value) {
    (*node)[keys.back()] = nlohmann::ordered_json::parse(value->dump());
  } else {
    node->erase(keys.back());
  }
  if (edited == *json_) return;
  set_text(QString::fromStdString(edited.dump(2)) + QLatin1Char('\n'));
}

void ScenarioDocument::validate() {
  json_.reset();
  scenario_.reset();
  error_.clear();
  error_line_ = 0;
  const std::string text = text_.toStdString();
  try {
    nlohmann::ordered_json parsed = nlohmann::ordered_json::parse(text);
    if (!parsed.is_object()) {
      error_ = QStringLiteral("the scenario must be a JSON object { ... }");
      return;
    }
    json_ = std::move(parsed);
  } catch (const nlohmann::json::parse_error& e) {
    // Byte offset -> line, so the editor can mark it.
    const size_t end = std::min<size_t>(e.byte, text.size());
    error_line_ = 1 + static_cast<int>(std::count(text.begin(), text.begin() + end, '\n'));
    // what() reads "[json.exception.parse_error.101] parse error at line 3, column 5: ...".
    std::string message = e.what();
    if (const size_t bracket = message.find("] "); bracket != std::string::npos) {
      message.erase(0, bracket + 2);
    }
    error_ = QStringLiteral("not valid JSON: ") + QString::fromStdString(message);
    return;
  }
  try {
    Scenario scenario =
        parse_scenario(*json(), base_dir_.toStdString(), origin().toStdString(), catalog_);
    // The checks Simulation would make before sizing memory, so they show while editing.
    const SimulationConfig& c = scenario.config;
    c.parallel.validate(c.model);
    c.engine.resolved_for(c.model, c.gpu).validate(c.model);
    scenario_ = std::move(scenario);
  } catch (const ConfigError& e) {
    error_ = QString::fromStdString(e.what());
  } catch (const nlohmann::json::exception& e) {
    error_ = QString::fromStdString(e.what());
  }
}

}  // namespace servesim::gui
