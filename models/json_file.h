// Reading JSON files with errors a user can act on: "path:line:column: message"; and writing
// JSON that a stray byte cannot stop. Stateless; thread-safe.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace servesim {

// Parses the file at `path`. Throws ConfigError when it cannot be opened or is not valid
// JSON, naming the file, line and column of the first error.
nlohmann::json load_json_file(const std::string& path);

// Same for text already in memory; `origin` names it in errors.
nlohmann::json parse_json_text(const std::string& text, const std::string& origin);

// The text of `j` as servesim writes its reports, indented by `indent` (-1: one line), with
// every byte of its strings that is not UTF-8 (a file name, a server's answer) written as
// U+FFFD: nlohmann's dump() would throw instead, after the run whose report it is.
std::string json_text(const nlohmann::json& j, int indent = 2);

}  // namespace servesim
