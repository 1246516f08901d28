#include "models/json_file.h"

#include <fstream>
#include <sstream>

#include "models/config_error.h"

namespace servesim {
namespace {

// "[json.exception.out_of_range.406] number overflow ..." -> "number overflow ...".
std::string strip_nlohmann_prefix(const std::string& message) {
  const size_t end = message.find("] ");
  return end == std::string::npos ? message : message.substr(end + 2);
}

}  // namespace

nlohmann::json parse_json_text(const std::string& text, const std::string& origin) {
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    // nlohmann reports a byte offset; users need line and column.
    const size_t offset = std::min<size_t>(e.byte == 0 ? 0 : e.byte - 1, text.size());
    size_t line = 1;
    size_t column = 1;
    for (size_t i = 0; i < offset; ++i) {
      if (text[i] == '\n') {
        ++line;
        column = 1;
      } else {
        ++column;
      }
    }
    std::string message = e.what();
    // Drop nlohmann's "[json.exception.parse_error.101] parse error at line 1, column 2: ".
    const size_t colon = message.find(": ", message.find("parse error"));
    if (colon != std::string::npos) message = message.substr(colon + 2);
    throw ConfigError(origin + ":" + std::to_string(line) + ":" + std::to_string(column) +
                      ": invalid JSON: " + message);
  } catch (const nlohmann::json::out_of_range& e) {
    // A number too large for a double ("1e400") is not a parse_error but out_of_range.406,
    // which carries no position.
    throw ConfigError(origin + ": invalid JSON: " + strip_nlohmann_prefix(e.what()));
  }
}

nlohmann::json load_json_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ConfigError(path + ": cannot open file");
  std::ostringstream buffer;
  buffer << in.rdbuf();
  return parse_json_text(buffer.str(), path);
}

std::string json_text(const nlohmann::json& j, int indent) {
  return j.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace servesim
