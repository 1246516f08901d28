#include "serve/server/openai_request.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "serve/server/api_error.h"
#include "serve/server/byte_tokenizer.h"

namespace servesim {
namespace {

using nlohmann::json;

const ByteTokenizer kTokenizer(320);

GenerationRequest parse(const json& body, Endpoint e = Endpoint::kCompletions) {
  return parse_generation_request(e, body.dump(), kTokenizer, kTokenizer.vocab_size());
}

// The ApiError a body raises.
ApiError error_of(const std::string& body, Endpoint e = Endpoint::kCompletions) {
  try {
    parse_generation_request(e, body, kTokenizer, kTokenizer.vocab_size());
  } catch (const ApiError& err) {
    return err;
  }
  ADD_FAILURE() << "no error for " << body;
  return ApiError(0, "");
}

TEST(OpenAiRequest, ReadsACompletionRequest) {
  const GenerationRequest r = parse({{"model", "m"},
                                     {"prompt", "Hi"},
                                     {"max_tokens", 5},
                                     {"min_tokens", 2},
                                     {"ignore_eos", true},
                                     {"temperature", 0},
                                     {"top_p", 0.5},
                                     {"seed", 42},
                                     {"stop_token_ids", {7, 9}},
                                     {"stream", true},
                                     {"stream_options", {{"include_usage", true}}}});
  EXPECT_EQ(r.model, "m");
  EXPECT_EQ(r.prompt_token_ids, (std::vector<int32_t>{73, 106}));
  EXPECT_EQ(r.max_tokens, 5);
  EXPECT_EQ(r.min_tokens, 2);
  EXPECT_TRUE(r.ignore_eos);
  EXPECT_EQ(r.sampling.temperature, 0.0f);
  EXPECT_EQ(r.sampling.top_p, 0.5f);
  EXPECT_EQ(r.sampling.seed, 42u);
  EXPECT_EQ(r.stop_token_ids, (std::vector<int32_t>{7, 9}));
  EXPECT_TRUE(r.stream);
  EXPECT_TRUE(r.include_usage);
  EXPECT_TRUE(r.ignored_fields.empty());
}

TEST(OpenAiRequest, DefaultsAreVllms) {
  const GenerationRequest r = parse({{"prompt", {1, 2, 3}}});
  EXPECT_EQ(r.prompt_token_ids, (std::vector<int32_t>{1, 2, 3}));
  EXPECT_FALSE(r.max_tokens);
  EXPECT_EQ(r.sampling.temperature, 1.0f);
  EXPECT_EQ(r.sampling.top_p, 1.0f);
  EXPECT_FALSE(r.stream);
  EXPECT_FALSE(r.include_usage);
  EXPECT_EQ(resolve_max_tokens(r, 100), 16);  // CompletionRequest.max_tokens = 16
  GenerationRequest chat =
      parse({{"messages", {{{"role", "user"}, {"content", "x"}}}}}, Endpoint::kChatCompletions);
  EXPECT_EQ(resolve_max_tokens(chat, 100), 100 - static_cast<int>(chat.prompt_token_ids.size()));
}

TEST(OpenAiRequest, PromptMayBeABatchOfOne) {
  EXPECT_EQ(parse({{"prompt", {"ab"}}}).prompt_token_ids, (std::vector<int32_t>{98, 99}));
  EXPECT_EQ(parse({{"prompt", {{4, 5}}}}).prompt_token_ids, (std::vector<int32_t>{4, 5}));
  const ApiError e = error_of(R"({"prompt": ["a", "b"]})");
  EXPECT_EQ(e.status(), 400);
  EXPECT_EQ(e.param(), "prompt");
  EXPECT_NE(std::string(e.what()).find("batch of 2"), std::string::npos);
}

TEST(OpenAiRequest, ChatMessagesGoThroughTheTemplate) {
  const GenerationRequest r =
      parse({{"messages",
              {{{"role", "system"}, {"content", "Be brief."}},
               {{"role", "user"}, {"content", {{{"type", "text"}, {"text", "Hi"}}}}}}},
             {"max_completion_tokens", 3}},
            Endpoint::kChatCompletions);
  EXPECT_EQ(kTokenizer.decode({}, r.prompt_token_ids),
            "<|system|>\nBe brief.\n<|user|>\nHi\n<|assistant|>\n");
  EXPECT_EQ(r.max_tokens, 3);
}

TEST(OpenAiRequest, MalformedJsonIs400) {
  const ApiError e = error_of("{\"prompt\": ");
  EXPECT_EQ(e.status(), 400);
  EXPECT_EQ(e.type(), "BadRequestError");
  EXPECT_EQ(error_of("[1, 2]").status(), 400);
}

TEST(OpenAiRequest, WrongTypesNameTheField) {
  struct Case {
    const char* body;
    const char* param;
  };
  const Case cases[] = {
      {R"({"prompt": "a", "max_tokens": "ten"})", "max_tokens"},
      {R"({"prompt": "a", "max_tokens": 1.5})", "max_tokens"},
      {R"({"prompt": "a", "temperature": "hot"})", "temperature"},
      {R"({"prompt": "a", "stream": 1})", "stream"},
      {R"({"prompt": "a", "ignore_eos": "yes"})", "ignore_eos"},
      {R"({"prompt": 5})", "prompt"},
      {R"({"prompt": [1, "x"]})", "prompt"},
      {R"({"prompt": "a", "model": 3})", "model"},
      {R"({"prompt": "a", "stop_token_ids": 3})", "stop_token_ids"},
      {R"({"prompt": "a", "stream": true, "stream_options": {"include_usage": 1}})",
       "stream_options.include_usage"}};
  for (const Case& c : cases) {
    const ApiError e = error_of(c.body);
    EXPECT_EQ(e.status(), 400) << c.body;
    EXPECT_EQ(e.param(), c.param) << c.body;
    EXPECT_NE(std::string(e.what()).find(c.param), std::string::npos) << e.what();
  }
  EXPECT_EQ(error_of(R"({"messages": "hi"})", Endpoint::kChatCompletions).param(), "messages");
  EXPECT_EQ(error_of(R"({"messages": [{"content": "hi"}]})", Endpoint::kChatCompletions).param(),
            "messages[0].role");
}

TEST(OpenAiRequest, OutOfRangeValuesAre400) {
  EXPECT_EQ(error_of(R"({"prompt": "a", "max_tokens": 0})").param(), "max_tokens");
  EXPECT_EQ(error_of(R"({"prompt": "a", "temperature": -1})").param(), "temperature");
  EXPECT_EQ(error_of(R"({"prompt": "a", "top_p": 0})").param(), "top_p");
  EXPECT_EQ(error_of(R"({"prompt": "a", "min_tokens": -2})").param(), "min_tokens");
  EXPECT_EQ(error_of(R"({"prompt": [1, 999]})").param(), "prompt");
  EXPECT_EQ(error_of(R"({"prompt": ""})").param(), "prompt");
  EXPECT_EQ(error_of(R"({"prompt": "a", "stream_options": {}})").param(), "stream_options");
}

TEST(OpenAiRequest, UnknownFieldsAreIgnoredAndListed) {
  const GenerationRequest r = parse({{"prompt", "a"}, {"user", "u"}, {"foo", {1, 2}}});
  EXPECT_EQ(r.ignored_fields, (std::vector<std::string>{"foo", "user"}));
}

TEST(OpenAiRequest, FieldsThatWouldChangeTheOutputAreRefused) {
  for (const char* body :
       {R"({"prompt": "a", "n": 2})", R"({"prompt": "a", "echo": true})",
        R"({"prompt": "a", "logprobs": 1})", R"({"prompt": "a", "stop": "x"})",
        R"({"prompt": "a", "presence_penalty": 0.5})", R"({"prompt": "a", "top_k": 5})"}) {
    const ApiError e = error_of(body);
    EXPECT_EQ(e.status(), 400) << body;
    EXPECT_NE(std::string(e.what()).find("not supported"), std::string::npos) << e.what();
  }
  // At their defaults they are accepted.
  EXPECT_NO_THROW(parse({{"prompt", "a"},
                         {"n", 1},
                         {"echo", false},
                         {"stop", json::array()},
                         {"logprobs", nullptr},
                         {"top_k", -1}}));
}

TEST(OpenAiRequest, TextTheVocabularyCannotHoldIs400) {
  const ByteTokenizer small(64);
  try {
    parse_generation_request(Endpoint::kCompletions, R"({"prompt": "Hello"})", small, 64);
    FAIL();
  } catch (const ApiError& e) {
    EXPECT_EQ(e.status(), 400);
    EXPECT_EQ(std::string(e.what()),
              "prompt: byte 0x48 has no token in this model's vocabulary of 64 (the servesim-byte "
              "tokenizer needs 257 tokens for every byte); send token ids instead");
  }
}

TEST(OpenAiRequest, MaxTokensBeyondMaxModelLenIs400WithVllmsMessage) {
  const GenerationRequest r = parse({{"prompt", {1, 2, 3, 4}}, {"max_tokens", 97}});
  try {
    resolve_max_tokens(r, 100);
    FAIL();
  } catch (const ApiError& e) {
    EXPECT_EQ(e.status(), 400);
    EXPECT_STREQ(e.what(),
                 "This model's maximum context length is 100 tokens. However, you requested 101 "
                 "tokens (4 in the messages, 97 in the completion). Please reduce the length of "
                 "the messages or completion.");
  }
  EXPECT_EQ(resolve_max_tokens(parse({{"prompt", {1, 2, 3, 4}}, {"max_tokens", 96}}), 100), 96);
  EXPECT_THROW(resolve_max_tokens(parse({{"prompt", std::vector<int>(100, 1)}}), 100), ApiError);
  EXPECT_THROW(
      resolve_max_tokens(parse({{"prompt", "a"}, {"max_tokens", 3}, {"min_tokens", 4}}), 100),
      ApiError);
}

}  // namespace
}  // namespace servesim
