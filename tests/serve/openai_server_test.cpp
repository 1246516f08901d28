#include "serve/server/openai_server.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>

#include "tests/serve/json_shape.h"
#include "tests/serve/serve_test_harness.h"

namespace servesim {
namespace {

namespace http = boost::beast::http;
using nlohmann::json;
using testing::expect_same_shape;
using testing::HttpReply;
using testing::post_json;
using testing::ServeHarness;
using testing::sse_events;
using testing::vllm_fixture;

const std::vector<int> kPrompt = {40, 41, 42, 43, 44, 45, 46, 47};

json greedy(json body) {
  body["temperature"] = 0;
  return body;
}

TEST(OpenAiServer, CompletionNonStreaming) {
  ServeHarness h;
  const HttpReply r = post_json(
      h.port(), "/v1/completions",
      greedy(
          {{"model", "tiny-serve"}, {"prompt", kPrompt}, {"max_tokens", 6}, {"ignore_eos", true}}));
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.content_type, "application/json");
  const json j = r.json();
  expect_same_shape(j, vllm_fixture("vllm_completion.json"));
  EXPECT_EQ(j["model"], "tiny-serve");
  EXPECT_EQ(j["choices"][0]["finish_reason"], "length");
  EXPECT_EQ(j["usage"]["prompt_tokens"], 8);
  EXPECT_EQ(j["usage"]["completion_tokens"], 6);
  EXPECT_EQ(j["usage"]["total_tokens"], 14);
  // Greedy: the same request gives the same text.
  const HttpReply again =
      post_json(h.port(), "/v1/completions",
                greedy({{"prompt", kPrompt}, {"max_tokens", 6}, {"ignore_eos", true}}));
  EXPECT_EQ(again.json()["choices"][0]["text"], j["choices"][0]["text"]);
}

TEST(OpenAiServer, CompletionStreamsOneChunkPerTokenThenUsageAndDone) {
  ServeHarness h;
  const HttpReply r = post_json(h.port(), "/v1/completions",
                                greedy({{"prompt", "Hello"},
                                        {"max_tokens", 5},
                                        {"ignore_eos", true},
                                        {"stream", true},
                                        {"stream_options", {{"include_usage", true}}}}));
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.content_type, "text/event-stream; charset=utf-8");
  const std::vector<std::string> events = sse_events(r.body);
  ASSERT_EQ(events.size(), 5u + 2u) << r.body;  // 5 tokens, usage, [DONE]
  std::string streamed;
  for (size_t i = 0; i < 5; ++i) {
    const json c = json::parse(events[i]);
    expect_same_shape(c, vllm_fixture("vllm_completion_chunk.json"));
    EXPECT_EQ(c["choices"][0]["finish_reason"], i == 4 ? json("length") : json(nullptr));
    streamed += c["choices"][0]["text"].get<std::string>();
  }
  const json usage = json::parse(events[5]);
  expect_same_shape(usage, vllm_fixture("vllm_completion_usage_chunk.json"));
  EXPECT_EQ(usage["usage"]["completion_tokens"], 5);
  EXPECT_EQ(usage["usage"]["prompt_tokens"], 5);
  EXPECT_EQ(events[6], "[DONE]");
  // The streamed text is the non-streamed text.
  const HttpReply whole =
      post_json(h.port(), "/v1/completions",
                greedy({{"prompt", "Hello"}, {"max_tokens", 5}, {"ignore_eos", true}}));
  EXPECT_EQ(whole.json()["choices"][0]["text"], streamed);
}

TEST(OpenAiServer, ChatStreamsRoleThenContent) {
  ServeHarness h;
  const json messages = {{{"role", "user"}, {"content", "Hi"}}};
  const HttpReply r = post_json(h.port(), "/v1/chat/completions",
                                greedy({{"messages", messages},
                                        {"max_completion_tokens", 3},
                                        {"ignore_eos", true},
                                        {"stream", true}}));
  ASSERT_EQ(r.status, 200) << r.body;
  const std::vector<std::string> events = sse_events(r.body);
  ASSERT_EQ(events.size(), 1u + 3u + 1u) << r.body;  // role, 3 tokens, [DONE]
  expect_same_shape(json::parse(events[0]), vllm_fixture("vllm_chat_chunk_first.json"));
  expect_same_shape(json::parse(events[1]), vllm_fixture("vllm_chat_chunk.json"));
  const json last = json::parse(events[3]);
  EXPECT_EQ(last["choices"][0]["finish_reason"], "length");
  EXPECT_EQ(events[4], "[DONE]");
  const HttpReply whole =
      post_json(h.port(), "/v1/chat/completions",
                greedy({{"messages", messages}, {"max_tokens", 3}, {"ignore_eos", true}}));
  ASSERT_EQ(whole.status, 200) << whole.body;
  expect_same_shape(whole.json(), vllm_fixture("vllm_chat_completion.json"));
  EXPECT_EQ(whole.json()["usage"]["prompt_tokens"],
            std::string("<|user|>\nHi\n<|assistant|>\n").size());
}

// stream_options.include_usage on chat: after the role chunk, one chunk per token and the
// finish, a last chunk with no choices and the usage (vLLM's shape: no prompt_tokens_details),
// then [DONE]; its prompt_tokens are the non-streamed answer's.
TEST(OpenAiServer, ChatStreamsAFinalUsageChunkWithIncludeUsage) {
  ServeHarness h;
  const json messages = {{{"role", "user"}, {"content", "Hi"}}};
  const auto stream_chat = [&](bool include_usage) {
    return post_json(h.port(), "/v1/chat/completions",
                     greedy({{"messages", messages},
                             {"max_completion_tokens", 3},
                             {"ignore_eos", true},
                             {"stream", true},
                             {"stream_options", {{"include_usage", include_usage}}}}));
  };
  const HttpReply r = stream_chat(true);
  ASSERT_EQ(r.status, 200) << r.body;
  const std::vector<std::string> events = sse_events(r.body);
  ASSERT_EQ(events.size(), 1u + 3u + 1u + 1u) << r.body;  // role, 3 tokens, usage, [DONE]
  const json first = json::parse(events[0]);
  for (size_t i = 0; i < 4; ++i) {
    const json c = json::parse(events[i]);
    EXPECT_FALSE(c.contains("usage")) << events[i];  // only with continuous_usage_stats
    EXPECT_EQ(c["choices"].size(), 1u) << events[i];
  }
  EXPECT_EQ(json::parse(events[3])["choices"][0]["finish_reason"], "length");
  const json usage = json::parse(events[4]);
  expect_same_shape(usage, vllm_fixture("vllm_chat_usage_chunk.json"));
  EXPECT_EQ(usage["object"], "chat.completion.chunk");
  EXPECT_EQ(usage["id"], first["id"]);
  EXPECT_TRUE(usage["choices"].empty());
  EXPECT_EQ(usage["usage"]["completion_tokens"], 3);
  EXPECT_EQ(events[5], "[DONE]");
  const HttpReply whole =
      post_json(h.port(), "/v1/chat/completions",
                greedy({{"messages", messages}, {"max_tokens", 3}, {"ignore_eos", true}}));
  ASSERT_EQ(whole.status, 200) << whole.body;
  const json want = whole.json()["usage"];
  EXPECT_EQ(usage["usage"]["prompt_tokens"], want["prompt_tokens"]);
  EXPECT_EQ(usage["usage"]["total_tokens"], want["total_tokens"]);

  // include_usage false: no usage chunk.
  const HttpReply without = stream_chat(false);
  ASSERT_EQ(without.status, 200) << without.body;
  EXPECT_EQ(sse_events(without.body).size(), 1u + 3u + 1u) << without.body;
}

TEST(OpenAiServer, StopTokenEndsWithStopReasonAndMinTokensHoldsIt) {
  ServeHarness h;
  // Every token id but one a stop token: the first sampled token stops the request, unless
  // min_tokens masks them all and leaves only that one.
  json stop_all = greedy({{"prompt", kPrompt}, {"max_tokens", 8}, {"ignore_eos", true}});
  std::vector<int> all;
  for (int i = 0; i < 320; ++i) {
    if (i != 300) all.push_back(i);
  }
  stop_all["stop_token_ids"] = all;
  const json stopped = post_json(h.port(), "/v1/completions", stop_all).json();
  EXPECT_EQ(stopped["choices"][0]["finish_reason"], "stop");
  EXPECT_TRUE(stopped["choices"][0]["stop_reason"].is_number_integer());
  EXPECT_EQ(stopped["usage"]["completion_tokens"], 1);
  EXPECT_EQ(stopped["choices"][0]["text"], "");  // the stop token's text is left out
  stop_all["min_tokens"] = 4;
  const json held = post_json(h.port(), "/v1/completions", stop_all).json();
  EXPECT_EQ(held["choices"][0]["finish_reason"], "stop");
  EXPECT_EQ(held["usage"]["completion_tokens"], 5);  // 4 masked, then the stop token
  EXPECT_EQ(held["choices"][0]["text"], "<|tok_300|><|tok_300|><|tok_300|><|tok_300|>");
}

TEST(OpenAiServer, ErrorsHaveVllmsStatusAndBody) {
  ServeHarness h;
  const uint16_t port = h.port();
  const HttpReply malformed =
      testing::http_call(port, http::verb::post, "/v1/completions", "{\"prompt\": [1,");
  EXPECT_EQ(malformed.status, 400);
  expect_same_shape(malformed.json(), vllm_fixture("vllm_error.json"));
  const HttpReply wrong_type =
      post_json(port, "/v1/completions", {{"prompt", "a"}, {"max_tokens", "many"}});
  EXPECT_EQ(wrong_type.status, 400);
  EXPECT_EQ(wrong_type.json()["error"]["param"], "max_tokens");
  const HttpReply too_long =
      post_json(port, "/v1/completions", {{"prompt", kPrompt}, {"max_tokens", 600}});
  EXPECT_EQ(too_long.status, 400);
  EXPECT_NE(too_long.json()["error"]["message"].get<std::string>().find(
                "maximum context length is 512 tokens"),
            std::string::npos);
  const HttpReply unknown_model =
      post_json(port, "/v1/completions", {{"prompt", "a"}, {"model", "gpt-9"}});
  EXPECT_EQ(unknown_model.status, 404);
  EXPECT_EQ(unknown_model.json()["error"]["type"], "NotFoundError");
  const HttpReply not_found = testing::http_call(port, http::verb::get, "/v2/nothing");
  EXPECT_EQ(not_found.status, 404);
  EXPECT_EQ(not_found.json()["detail"], "Not Found");
  const HttpReply wrong_method = testing::http_call(port, http::verb::get, "/v1/completions");
  EXPECT_EQ(wrong_method.status, 405);
  EXPECT_EQ(wrong_method.allow, "POST");
  EXPECT_EQ(testing::http_call(port, http::verb::post, "/metrics").status, 405);
  // The server still answers after all of them.
  EXPECT_EQ(testing::http_call(port, http::verb::get, "/health").status, 200);
}

TEST(OpenAiServer, UnknownFieldsAreIgnored) {
  ServeHarness h;
  const HttpReply r = post_json(h.port(), "/v1/completions",
                                {{"prompt", "a"}, {"max_tokens", 2}, {"user", "me"}, {"xyz", 1}});
  EXPECT_EQ(r.status, 200) << r.body;
}

TEST(OpenAiServer, OversizeBodyIs413) {
  ServeOptions o = testing::serve_test_options();
  o.max_body_bytes = 1000;
  ServeHarness h(o);
  const HttpReply r = post_json(h.port(), "/v1/completions",
                                {{"prompt", std::string(5000, 'a')}, {"max_tokens", 2}});
  EXPECT_EQ(r.status, 413);
  EXPECT_EQ(r.json()["error"]["code"], 413);
  EXPECT_EQ(post_json(h.port(), "/v1/completions", {{"prompt", "a"}, {"max_tokens", 1}}).status,
            200);
}

TEST(OpenAiServer, InfoEndpoints) {
  ServeHarness h;
  const uint16_t port = h.port();
  EXPECT_EQ(testing::http_call(port, http::verb::get, "/health").body, "");
  EXPECT_EQ(testing::http_call(port, http::verb::get, "/version").json()["version"], "test");
  const json models = testing::http_call(port, http::verb::get, "/v1/models").json();
  expect_same_shape(models, vllm_fixture("vllm_models.json"), {"tokenizer"});
  EXPECT_EQ(models["data"][0]["id"], "tiny-serve");
  EXPECT_EQ(models["data"][0]["max_model_len"], 512);
  post_json(port, "/v1/completions", {{"prompt", "abc"}, {"max_tokens", 3}, {"ignore_eos", true}});
  const HttpReply metrics = testing::http_call(port, http::verb::get, "/metrics");
  EXPECT_EQ(metrics.content_type, "text/plain; version=0.0.4; charset=utf-8");
  const std::string l = "{model_name=\"tiny-serve\",engine=\"0\"}";
  EXPECT_NE(metrics.body.find("vllm:generation_tokens_total" + l + " 3.0"), std::string::npos)
      << metrics.body;
  EXPECT_NE(metrics.body.find("vllm:prompt_tokens_total" + l + " 3.0"), std::string::npos);
  EXPECT_NE(metrics.body.find("vllm:e2e_request_latency_seconds_count" + l + " 1.0"),
            std::string::npos);
}

TEST(OpenAiServer, KeepAliveServesSeveralRequestsOnOneConnection) {
  ServeHarness h;
  boost::asio::io_context io;
  auto socket = testing::connect_to(io, h.port());
  boost::beast::flat_buffer buffer;
  for (int i = 0; i < 3; ++i) {
    http::request<http::string_body> req{http::verb::post, "/v1/completions", 11};
    req.set(http::field::host, "x");
    req.body() = json{{"prompt", "ab"}, {"max_tokens", 2}, {"stream", i == 1}}.dump();
    req.prepare_payload();
    http::write(socket, req);
    http::response<http::string_body> res;
    http::read(socket, buffer, res);
    EXPECT_EQ(res.result_int(), 200u);
    EXPECT_TRUE(res.keep_alive());
  }
}

TEST(OpenAiServer, ExpectContinueGetsTheGoAheadAtOnce) {
  ServeHarness h;
  boost::asio::io_context io;
  auto socket = testing::connect_to(io, h.port());
  const std::string body = json{{"prompt", std::vector<int>(400, 65)}, {"max_tokens", 2}}.dump();
  const std::string head =
      "POST /v1/completions HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\n"
      "Content-Type: application/json\r\nContent-Length: " +
      std::to_string(body.size()) + "\r\n\r\n";
  boost::asio::write(socket, boost::asio::buffer(head));
  boost::beast::flat_buffer buffer;
  http::response_parser<http::empty_body> interim;
  http::read_header(socket, buffer, interim);
  EXPECT_EQ(interim.get().result(), http::status::continue_);
  boost::asio::write(socket, boost::asio::buffer(body));
  http::response<http::string_body> res;
  http::read(socket, buffer, res);
  EXPECT_EQ(res.result_int(), 200u) << res.body();
}

// As vLLM's Starlette routes do: HEAD on a GET route has the GET's header and no body, HEAD on a
// POST route is a 405 without a body; on a kept-alive connection the next answer follows at once
// (a body after a HEAD's header would be read as the start of the next response). Found by
// fuzz_serve_http.
TEST(OpenAiServer, HeadIsAnsweredWithoutABody) {
  ServeHarness h;
  boost::asio::io_context io;
  auto socket = testing::connect_to(io, h.port());
  const std::string requests =
      "HEAD /v1/models HTTP/1.1\r\nHost: x\r\n\r\n"
      "HEAD /v1/completions HTTP/1.1\r\nHost: x\r\n\r\n"
      "GET /version HTTP/1.1\r\nHost: x\r\n\r\n";
  boost::asio::write(socket, boost::asio::buffer(requests));
  boost::beast::flat_buffer buffer;
  http::response_parser<http::string_body> models;
  models.skip(true);
  http::read(socket, buffer, models);
  EXPECT_EQ(models.get().result_int(), 200u);
  EXPECT_GT(std::stoul(std::string(models.get()[http::field::content_length])), 0u);
  EXPECT_TRUE(models.get().body().empty());
  http::response_parser<http::string_body> post_only;
  post_only.skip(true);
  http::read(socket, buffer, post_only);
  EXPECT_EQ(post_only.get().result_int(), 405u);
  EXPECT_EQ(post_only.get()[http::field::allow], "POST");
  http::response<http::string_body> version;
  http::read(socket, buffer, version);
  EXPECT_EQ(version.result_int(), 200u);
  EXPECT_EQ(json::parse(version.body())["version"], "test");
}

// Clients choose the names of the fields the server ignores: it reports the first 64 once each,
// cut to 64 bytes with control bytes shown as '?', then says the rest go unreported, and keeps
// no more names than that (fuzz_serve_http's random names grew the set without bound).
TEST(OpenAiServer, IgnoredFieldWarningsAreBoundedAndPrintable) {
  ServeContext context;
  std::vector<std::string> names;
  for (int i = 0; i < 100; ++i) names.push_back("field" + std::to_string(i));
  ::testing::internal::CaptureStderr();
  context.warn_ignored({"bad\x1b[2Jname" + std::string(200, 'x')});
  context.warn_ignored(names);
  context.warn_ignored({"field0", "another"});
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 65) << err;
  EXPECT_NE(err.find("'bad?[2Jname" + std::string(53, 'x') + "...'"), std::string::npos) << err;
  EXPECT_NE(err.find("'field62'"), std::string::npos);
  EXPECT_EQ(err.find("'field63'"), std::string::npos);
  EXPECT_NE(err.find("64 unsupported request fields reported; further ones are ignored"),
            std::string::npos);
  EXPECT_EQ(err.find("another"), std::string::npos);
}

}  // namespace
}  // namespace servesim
