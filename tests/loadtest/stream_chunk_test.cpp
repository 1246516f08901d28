#include "serve/loadtest/stream_chunk.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "models/config_error.h"
#include "serve/loadtest/request_body.h"

namespace servesim {
namespace {

TEST(StreamChunk, CompletionsChunksUsageAndDone) {
  EXPECT_TRUE(parse_stream_chunk(R"({"choices":[{"index":0,"text":" hi"}]})", ApiKind::kCompletions)
                  .has_token);
  // vLLM's text of a token may be empty (a partial UTF-8 character): still a token.
  EXPECT_TRUE(parse_stream_chunk(R"({"choices":[{"text":""}]})", ApiKind::kCompletions).has_token);
  const StreamChunk usage =
      parse_stream_chunk(R"({"choices":[],"usage":{"prompt_tokens":12,"completion_tokens":5}})",
                         ApiKind::kCompletions);
  EXPECT_FALSE(usage.has_token);
  EXPECT_EQ(usage.prompt_tokens, 12);
  EXPECT_EQ(usage.completion_tokens, 5);
  EXPECT_TRUE(parse_stream_chunk("[DONE]", ApiKind::kCompletions).done);
}

TEST(StreamChunk, ChatRoleDeltaIsNotAToken) {
  EXPECT_FALSE(parse_stream_chunk(R"({"choices":[{"delta":{"role":"assistant","content":""}}]})",
                                  ApiKind::kChat)
                   .has_token);
  EXPECT_TRUE(
      parse_stream_chunk(R"({"choices":[{"delta":{"content":"x"}}]})", ApiKind::kChat).has_token);
}

TEST(StreamChunk, MalformedAndServerErrors) {
  const StreamChunk bad = parse_stream_chunk("{not json", ApiKind::kCompletions);
  EXPECT_FALSE(bad.error.empty());
  EXPECT_FALSE(bad.server_error);
  EXPECT_FALSE(parse_stream_chunk("[1,2]", ApiKind::kCompletions).error.empty());
  const StreamChunk err =
      parse_stream_chunk(R"({"error":{"message":"out of memory"}})", ApiKind::kCompletions);
  EXPECT_TRUE(err.server_error);
  EXPECT_EQ(err.error, "out of memory");
}

// Found by fuzz_loadtest_stream: a usage block with a negative or an out-of-range count set
// the request's output tokens to it (a negative TPOT divisor, a wrapped int). Such a count is
// left out now, and the load test counts the streamed chunks instead.
TEST(StreamChunk, UsageCountsOutsideZeroToIntMaxAreLeftOut) {
  const StreamChunk negative = parse_stream_chunk(
      R"({"choices": [], "usage": {"prompt_tokens": -1, "completion_tokens": -5}})",
      ApiKind::kCompletions);
  EXPECT_TRUE(negative.error.empty());
  EXPECT_FALSE(negative.prompt_tokens);
  EXPECT_FALSE(negative.completion_tokens);
  const StreamChunk huge = parse_stream_chunk(
      R"({"usage": {"prompt_tokens": 4294967297, "completion_tokens": 2147483648}})",
      ApiKind::kChat);
  EXPECT_FALSE(huge.prompt_tokens);
  EXPECT_FALSE(huge.completion_tokens);
  const StreamChunk edge = parse_stream_chunk(
      R"({"usage": {"prompt_tokens": 0, "completion_tokens": 2147483647}})", ApiKind::kChat);
  EXPECT_EQ(edge.prompt_tokens, 0);
  EXPECT_EQ(edge.completion_tokens, 2147483647);
}

TEST(StreamChunk, ApiKinds) {
  EXPECT_EQ(parse_api_kind("/v1/chat/completions"), ApiKind::kChat);
  EXPECT_STREQ(api_path(parse_api_kind("/v1/completions")), "/v1/completions");
  EXPECT_THROW(parse_api_kind("/v1/embeddings"), ConfigError);
}

TEST(RequestBody, AsksForExactlyTheOutputLength) {
  RequestSpec spec;
  spec.prompt_tokens = 3;
  spec.output_tokens = 7;
  const nlohmann::json j =
      nlohmann::json::parse(completion_request_body(spec, {5, 6, 7}, "m", ApiKind::kCompletions));
  EXPECT_EQ(j["model"], "m");
  EXPECT_EQ(j["prompt"], nlohmann::json({5, 6, 7}));
  EXPECT_EQ(j["max_tokens"], 7);
  EXPECT_EQ(j["min_tokens"], 7);
  EXPECT_EQ(j["ignore_eos"], true);
  EXPECT_EQ(j["stream"], true);
  EXPECT_EQ(j["stream_options"]["include_usage"], true);
  const nlohmann::json chat =
      nlohmann::json::parse(completion_request_body(spec, {5, 6, 7}, "m", ApiKind::kChat));
  EXPECT_FALSE(chat.contains("prompt"));
  EXPECT_EQ(chat["messages"][0]["role"], "user");
  const std::string text = chat["messages"][0]["content"];
  EXPECT_EQ(std::count(text.begin(), text.end(), ' '), 2);  // one word per prompt id
}

}  // namespace
}  // namespace servesim
