#include "models/json_file.h"

#include <gtest/gtest.h>

#include "models/config_error.h"

namespace servesim {
namespace {

std::string error_of(const std::string& text) {
  try {
    parse_json_text(text, "in.json");
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "no error";
}

TEST(JsonFile, SyntaxErrorNamesLineAndColumn) {
  EXPECT_EQ(error_of("{\n  \"a\": ,\n}").rfind("in.json:2:8: invalid JSON: ", 0), 0u)
      << error_of("{\n  \"a\": ,\n}");
}

// Fuzz finding (fuzz_model_config, fuzz_calibration_profile): a number beyond a double is
// nlohmann's out_of_range.406, not a parse_error, and escaped as another exception type.
TEST(JsonFile, NumberBeyondADoubleIsAOneLineConfigError) {
  for (const std::string text : {"{\"hidden_size\": 1e30824}", "[-1e3081]"}) {
    const std::string message = error_of(text);
    EXPECT_EQ(message.rfind("in.json: invalid JSON: number overflow", 0), 0u) << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  }
}

TEST(JsonFile, TextThatIsNotUtf8IsWrittenAsReplacementCharacters) {
  const nlohmann::json j = {{"log", "/tmp/vllm-\xff.log"}, {"n", 1}};
  EXPECT_THROW((void)j.dump(), nlohmann::json::type_error);  // what json_text is for
  EXPECT_EQ(json_text(j, -1), "{\"log\":\"/tmp/vllm-\xef\xbf\xbd.log\",\"n\":1}");
  EXPECT_EQ(json_text(nlohmann::json{{"a", 1}}), "{\n  \"a\": 1\n}");
}

}  // namespace
}  // namespace servesim
