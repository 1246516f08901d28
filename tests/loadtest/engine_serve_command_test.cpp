// `servesim engine serve`'s flags, on the process: --enable-prefix-caching and
// --no-enable-prefix-caching reach the engine (seen in /metrics), and a --max-model-len beyond
// the model's or a bad --port is one `error:` line with exit status 2. Here beside the
// end-to-end loadtest because both drive the servesim binary (EngineServeProcess).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "serve/loadtest/asio_config.h"
#include "serve/loadtest/prometheus_text.h"
#include "tests/cli/cli_runner.h"
#include "tests/loadtest/engine_serve_process.h"

namespace servesim {
namespace {

namespace http = net::http;

const std::string kTinyModel =
    std::string(SERVESIM_SOURCE_DIR) + "/tests/serve/data/tiny-serve-model.json";

// "http://127.0.0.1:PORT" -> PORT.
uint16_t port_of(const std::string& url) {
  return static_cast<uint16_t>(std::stoi(url.substr(url.rfind(':') + 1)));
}

// One blocking request on a fresh connection; the body of the answer (200 expected).
std::string call(uint16_t port, http::verb method, const std::string& target,
                 const std::string& body = "") {
  net::asio::io_context io;
  net::tcp::socket socket(io);
  socket.connect({net::asio::ip::make_address("127.0.0.1"), port});
  http::request<http::string_body> req{method, target, 11};
  req.set(http::field::host, "127.0.0.1");
  req.set(http::field::content_type, "application/json");
  req.body() = body;
  req.prepare_payload();
  http::write(socket, req);
  net::beast::flat_buffer buffer;
  http::response<http::string_body> res;
  http::read(socket, buffer, res);
  EXPECT_EQ(res.result_int(), 200u) << target << ": " << res.body();
  return res.body();
}

// The same 64-token prompt twice, one after the other, then vllm:prefix_cache_hits_total
// (tokens): the second request finds the first's full KV blocks when prefix caching is on.
double prefix_cache_hits_after_a_repeated_prompt(const std::string& flags) {
  testing::EngineServeProcess server("--model " + kTinyModel + " --max-model-len 512 " + flags);
  const std::string url = server.wait_for_url();
  EXPECT_FALSE(url.empty()) << "engine serve did not start: " << server.log();
  if (url.empty()) return -1;
  std::vector<int> prompt(64);
  for (size_t i = 0; i < prompt.size(); ++i) prompt[i] = 1 + static_cast<int>(i * 7 % 300);
  const std::string body =
      nlohmann::json{{"prompt", prompt}, {"max_tokens", 2}, {"ignore_eos", true}}.dump();
  for (int i = 0; i < 2; ++i) call(port_of(url), http::verb::post, "/v1/completions", body);
  const PromScrape scrape = parse_prometheus_text(call(port_of(url), http::verb::get, "/metrics"));
  double hits = -1;
  EXPECT_TRUE(prom_sum(scrape.samples, "vllm:prefix_cache_hits_total", hits));
  double queries = -1;
  EXPECT_TRUE(prom_sum(scrape.samples, "vllm:prefix_cache_queries_total", queries));
  // The start-up line says what the engine runs with.
  const bool off = flags.find("--no-enable-prefix-caching") != std::string::npos;
  EXPECT_NE(server.log().find(std::string("max_num_batched_tokens 2048, prefix caching ") +
                              (off ? "off" : "on") + "; tokenizer servesim-byte"),
            std::string::npos)
      << server.log();
  return hits;
}

TEST(EngineServeCommand, PrefixCachingFlagsReachTheEngine) {
  // 64 tokens are four 16-token blocks; the second request reuses at least three of them.
  EXPECT_GE(prefix_cache_hits_after_a_repeated_prompt("--enable-prefix-caching"), 48);
  EXPECT_GE(prefix_cache_hits_after_a_repeated_prompt(""), 48);  // vLLM V1's default: on
  EXPECT_EQ(prefix_cache_hits_after_a_repeated_prompt("--no-enable-prefix-caching"), 0);
}

// A server that accepts its flags would never exit: bounded, so a test cannot hang on it.
testing::CliResult run_bounded(const std::string& args) {
  return testing::run_servesim(args, 30);
}

void expect_one_line_error(const std::string& args, const std::string& says) {
  const testing::CliResult r = run_bounded("engine serve --model " + kTinyModel + " " + args);
  EXPECT_EQ(r.exit_code, 2) << args << ": " << r.err;
  EXPECT_EQ(r.err.rfind("error: ", 0), 0u) << r.err;
  EXPECT_NE(r.err.find(says), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
}

TEST(EngineServeCommand, MaxModelLenBeyondTheModelsIsOneLine) {
  // tiny-serve-model.json: max_position_embeddings 8192.
  expect_one_line_error("--port 0 --max-model-len 8193",
                        "--max-model-len 8193 is greater than the derived max_model_len 8192");
}

TEST(EngineServeCommand, BadPortIsOneLine) {
  expect_one_line_error("--port 65536", "--port must be in 0..65535");
  expect_one_line_error("--port -1", "--port must be in 0..65535");
  expect_one_line_error("--port eighty", "--port");
  // A port another socket listens on.
  net::asio::io_context io;
  net::tcp::acceptor taken(io, {net::asio::ip::make_address("127.0.0.1"), 0});
  const std::string port = std::to_string(taken.local_endpoint().port());
  expect_one_line_error("--host 127.0.0.1 --port " + port,
                        "--port " + port + ": cannot listen (Address already in use)");
}

}  // namespace
}  // namespace servesim
