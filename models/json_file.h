// Reading JSON files with errors a user can act on: "path:line:column: message".
// Stateless; thread-safe.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace servesim {

// Parses the file at `path`. Throws ConfigError when it cannot be opened or is not valid
// JSON, naming the file, line and column of the first error.
nlohmann::json load_json_file(const std::string& path);

// Same for text already in memory; `origin` names it in errors.
nlohmann::json parse_json_text(const std::string& text, const std::string& origin);

}  // namespace servesim
