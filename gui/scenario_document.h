// ScenarioDocument: the scenario being edited — the JSON text exactly as the user typed it,
// the file it belongs to, and the verdict of the same checks the CLI makes before a run:
// parse_scenario(), then the parallel layout and engine flags against the model (whether the
// deployment fits in memory is the Memory view's business, not a validation error).
//
// The text is the source of truth: it is kept even when it is not JSON or does not validate,
// so nothing the user typed is lost; form fields read and write single keys of it
// (value()/set_value(), dotted paths such as "engine.max_num_seqs"), which rewrites the text
// as indented JSON with the keys in their original order.
// Invariants: scenario() is set exactly when error() is empty; error() is one line
// (a ConfigError message or a JSON syntax error with its line); error_line() > 0 only for
// syntax errors.
// Thread-safety: a QObject of the GUI thread; call it from that thread only.
#pragma once

#include <QObject>
#include <QString>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "models/catalog.h"
#include "sim/scenario/scenario.h"

namespace servesim::gui {

class ScenarioDocument : public QObject {
  Q_OBJECT

 public:
  explicit ScenarioDocument(QObject* parent = nullptr);

  // Reads `path` verbatim and makes it the document's file. Returns false and sets *error
  // when the file cannot be read; the document is then unchanged. A file that is not valid
  // JSON or not a valid scenario still opens: error() says why.
  bool load(const QString& path, QString* error);
  // Like load(), but the document has no file afterwards (Save asks for one): for starting
  // from a bundled scenario. Relative paths inside it still resolve against its folder.
  bool load_template(const QString& path, QString* error);
  // Writes the text as is to `path`, which becomes the document's file.
  bool save(const QString& path, QString* error);

  const QString& text() const { return text_; }
  // Replaces the text (marks the document modified) and validates it.
  void set_text(const QString& text);

  const QString& path() const { return path_; }
  // The folder relative paths in the scenario resolve against.
  const QString& base_dir() const { return base_dir_; }
  bool modified() const { return modified_; }

  bool is_json_object() const { return json_.has_value(); }
  const std::optional<Scenario>& scenario() const { return scenario_; }
  const QString& error() const { return error_; }
  int error_line() const { return error_line_; }

  // The whole text as JSON; nullopt when it is not a JSON object.
  std::optional<nlohmann::json> json() const;
  // How error messages name the document: its file name, or "untitled".
  QString origin() const;
  // The value at a dotted path; nullopt when absent or the text is not a JSON object.
  std::optional<nlohmann::json> value(const std::string& dotted_path) const;
  // Sets (or, with nullopt, removes) the value at a dotted path, creating objects on the
  // way. Does nothing when the text is not a JSON object or the path crosses a non-object.
  void set_value(const std::string& dotted_path, const std::optional<nlohmann::json>& value);

  const Catalog& catalog() const { return catalog_; }

 signals:
  // The text, the file or the verdict changed.
  void changed();

 private:
  bool read_file(const QString& path, QString* text, QString* error) const;
  void validate();

  Catalog catalog_;
  QString text_;
  QString path_;
  QString base_dir_;
  bool modified_ = false;
  std::optional<nlohmann::ordered_json> json_;  // the text, parsed, keys in file order
  std::optional<Scenario> scenario_;
  QString error_;
  int error_line_ = 0;
};

}  // namespace servesim::gui
