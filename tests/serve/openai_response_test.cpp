#include "serve/server/openai_response.h"

#include <gtest/gtest.h>

#include "tests/serve/json_shape.h"

namespace servesim {
namespace {

using testing::expect_same_shape;
using testing::vllm_fixture;

const ResponseHeader kCompletion{Endpoint::kCompletions, "cmpl-1", 1764590000, "tiny-serve"};
const ResponseHeader kChat{Endpoint::kChatCompletions, "chatcmpl-1", 1764590000, "tiny-serve"};
const Usage kUsage{5, 2};

TEST(OpenAiResponse, CompletionHasVllmsShape) {
  const auto j = response_json(kCompletion, " world", ChoiceEnd{"length", std::nullopt}, kUsage);
  expect_same_shape(j, vllm_fixture("vllm_completion.json"));
  EXPECT_EQ(j["object"], "text_completion");
  EXPECT_EQ(j["choices"][0]["text"], " world");
  EXPECT_EQ(j["usage"]["total_tokens"], 7);
}

TEST(OpenAiResponse, CompletionChunksHaveVllmsShape) {
  expect_same_shape(chunk_json(kCompletion, " w", std::nullopt, false, std::nullopt),
                    vllm_fixture("vllm_completion_chunk.json"));
  expect_same_shape(usage_chunk_json(kCompletion, kUsage),
                    vllm_fixture("vllm_completion_usage_chunk.json"));
  const auto last = chunk_json(kCompletion, "", ChoiceEnd{"stop", 42}, false, std::nullopt);
  EXPECT_EQ(last["choices"][0]["finish_reason"], "stop");
  EXPECT_EQ(last["choices"][0]["stop_reason"], 42);
}

TEST(OpenAiResponse, ChatHasVllmsShape) {
  expect_same_shape(response_json(kChat, "Hello", ChoiceEnd{"stop", std::nullopt}, {12, 6}),
                    vllm_fixture("vllm_chat_completion.json"));
  expect_same_shape(chunk_json(kChat, "", std::nullopt, true, std::nullopt),
                    vllm_fixture("vllm_chat_chunk_first.json"));
  expect_same_shape(chunk_json(kChat, "He", std::nullopt, false, std::nullopt),
                    vllm_fixture("vllm_chat_chunk.json"));
  expect_same_shape(chunk_json(kChat, "", ChoiceEnd{"stop", std::nullopt}, false, std::nullopt),
                    vllm_fixture("vllm_chat_chunk_last.json"));
  expect_same_shape(usage_chunk_json(kChat, kUsage), vllm_fixture("vllm_chat_usage_chunk.json"));
  EXPECT_EQ(usage_chunk_json(kChat, kUsage)["object"], "chat.completion.chunk");
  // continuous_usage_stats: a chat chunk's usage has only the fields vLLM sets.
  EXPECT_FALSE(chunk_json(kChat, "He", std::nullopt, false, kUsage)["usage"].contains(
      "prompt_tokens_details"));
}

TEST(OpenAiResponse, ErrorAndModelsHaveVllmsShape) {
  const ApiError e(400, "too long", "max_tokens");
  const auto j = error_json(e);
  expect_same_shape(j, vllm_fixture("vllm_error.json"));
  EXPECT_EQ(j["error"]["code"], 400);
  EXPECT_EQ(j["error"]["type"], "BadRequestError");
  EXPECT_TRUE(error_json(ApiError(400, "bad")).at("error").at("param").is_null());
  const auto models = models_json("tiny-serve", "tiny-serve", 512, 1764590000, "servesim-byte");
  expect_same_shape(models, vllm_fixture("vllm_models.json"), {"tokenizer"});
  EXPECT_EQ(models["data"][0]["tokenizer"], "servesim-byte");
}

TEST(OpenAiResponse, IdsAreDeterministicAndDistinct) {
  EXPECT_EQ(response_id(Endpoint::kCompletions, 3), response_id(Endpoint::kCompletions, 3));
  EXPECT_NE(response_id(Endpoint::kCompletions, 3), response_id(Endpoint::kCompletions, 4));
  EXPECT_EQ(response_id(Endpoint::kCompletions, 3).size(), 5u + 32u);
  EXPECT_EQ(response_id(Endpoint::kChatCompletions, 3).rfind("chatcmpl-", 0), 0u);
}

}  // namespace
}  // namespace servesim
