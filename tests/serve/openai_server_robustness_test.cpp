// The server under clients that misbehave: they leave mid-request, sit idle, or stop reading.
#include <gtest/gtest.h>

#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>
#include <future>

#include "tests/serve/serve_test_harness.h"

namespace servesim {
namespace {

namespace http = boost::beast::http;
namespace net = boost::asio;
using nlohmann::json;
using testing::post_json;
using testing::ServeHarness;
using tcp = net::ip::tcp;

// A long generation (ignore_eos, thousands of tokens) that only a cancellation ends early.
std::string long_request(bool stream) {
  const json body = {{"prompt", {1, 2, 3, 4}},
                     {"max_tokens", 8000},
                     {"ignore_eos", true},
                     {"temperature", 0},
                     {"stream", stream}};
  http::request<http::string_body> req{http::verb::post, "/v1/completions", 11};
  req.set(http::field::host, "127.0.0.1");
  req.body() = body.dump();
  req.prepare_payload();
  std::ostringstream out;
  out << req;
  return out.str();
}

// Every block back in the free pool, the pool consistent, nothing live.
void expect_all_blocks_free(ServeHarness& h) {
  const EngineSnapshot s = h.wait_idle();
  EXPECT_EQ(s.live_jobs, 0);
  EXPECT_EQ(s.stats.num_running, 0);
  EXPECT_EQ(s.kv_free_blocks, s.kv_usable_blocks);
  EXPECT_TRUE(s.invariants_ok);
}

int64_t aborted_requests(ServeHarness& h) {
  const std::string text = h.server().metrics().render();
  const std::string key =
      "vllm:request_success_total{model_name=\"tiny-serve\",engine=\"0\",finished_reason=\"abort\"}"
      " ";
  const size_t at = text.find(key);
  return at == std::string::npos ? -1 : std::stoll(text.substr(at + key.size()));
}

// Waits (up to 20 s) until the server counted `n` aborted requests. The client can read its first
// chunk and leave before the worker publishes the snapshot that shows its request live, so
// waiting for an idle snapshot alone may see the one from before the request.
void wait_for_aborts(ServeHarness& h, int64_t n) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (aborted_requests(h) < n && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
}

TEST(OpenAiServerRobustness, ClientLeavingMidStreamAbortsItsSequence) {
  ServeHarness h(testing::serve_test_options(), testing::long_scheduler_config());
  net::io_context io;
  tcp::socket socket = testing::connect_to(io, h.port());
  net::write(socket, net::buffer(long_request(true)));
  std::string got;
  char buf[1024];
  while (got.find("data: ") == std::string::npos ||
         got.find("\n\n", got.find("data: ")) == std::string::npos) {
    got.append(buf, socket.read_some(net::buffer(buf)));
  }
  socket.close();
  wait_for_aborts(h, 1);
  expect_all_blocks_free(h);
  EXPECT_EQ(aborted_requests(h), 1);
  EXPECT_EQ(post_json(h.port(), "/v1/completions", {{"prompt", "a"}, {"max_tokens", 2}}).status,
            200);
}

TEST(OpenAiServerRobustness, ClientLeavingANonStreamingRequestAbortsIt) {
  ServeHarness h(testing::serve_test_options(), testing::long_scheduler_config());
  {
    net::io_context io;
    tcp::socket socket = testing::connect_to(io, h.port());
    net::write(socket, net::buffer(long_request(false)));
    // Leave once the engine has it.
    while (h.server().worker().snapshot().stats.num_running == 0) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }
  expect_all_blocks_free(h);
  EXPECT_EQ(aborted_requests(h), 1);
}

TEST(OpenAiServerRobustness, IdleConnectionsDoNotStopOthersBeingServed) {
  ServeHarness h;
  net::io_context io;
  std::vector<tcp::socket> idle;
  for (int i = 0; i < 200; ++i) idle.push_back(testing::connect_to(io, h.port()));
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(post_json(h.port(), "/v1/completions", {{"prompt", "ab"}, {"max_tokens", 3}}).status,
              200);
  }
  EXPECT_GE(h.server().open_connections(), 200);
}

TEST(OpenAiServerRobustness, ConnectionsBeyondTheLimitGet503) {
  ServeOptions o = testing::serve_test_options();
  o.max_connections = 4;
  ServeHarness h(o);
  net::io_context io;
  std::vector<tcp::socket> idle;
  for (int i = 0; i < 4; ++i) idle.push_back(testing::connect_to(io, h.port()));
  while (h.server().open_connections() < 4)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  const testing::HttpReply r = testing::http_call(h.port(), http::verb::get, "/health");
  EXPECT_EQ(r.status, 503);
  EXPECT_EQ(r.json()["error"]["code"], 503);
  idle.clear();
  while (h.server().open_connections() > 0)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  EXPECT_EQ(testing::http_call(h.port(), http::verb::get, "/health").status, 200);
}

TEST(OpenAiServerRobustness, AClientThatStopsReadingIsAbortedPastTheBound) {
  ServeOptions o = testing::serve_test_options();
  o.max_stream_buffer_bytes = 16 * 1024;
  o.socket_send_buffer_bytes = 4096;
  ServeHarness h(o, testing::long_scheduler_config());
  net::io_context io;
  tcp::socket slow(io);
  slow.open(tcp::v4());
  slow.set_option(net::socket_base::receive_buffer_size(4096));
  slow.connect({net::ip::make_address("127.0.0.1"), h.port()});
  net::write(slow, net::buffer(long_request(true)));
  // Others are served while the slow client sits on its stream.
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(post_json(h.port(), "/v1/completions", {{"prompt", "ab"}, {"max_tokens", 3}}).status,
              200);
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (h.server().slow_client_aborts() == 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  EXPECT_EQ(h.server().slow_client_aborts(), 1);
  expect_all_blocks_free(h);
  EXPECT_EQ(aborted_requests(h), 1);
}

TEST(OpenAiServerRobustness, StopEndsStreamsWithAbort) {
  auto h = std::make_unique<ServeHarness>(testing::serve_test_options(),
                                          testing::long_scheduler_config());
  net::io_context io;
  tcp::socket socket = testing::connect_to(io, h->port());
  net::write(socket, net::buffer(long_request(true)));
  char first[256];
  socket.read_some(net::buffer(first));  // the stream has started
  h->server().stop(2.0);
  std::string rest;
  boost::system::error_code ec;
  char buf[4096];
  while (rest.find("data: [DONE]") == std::string::npos) {
    const size_t n = socket.read_some(net::buffer(buf), ec);
    if (ec) break;
    rest.append(buf, n);
  }
  EXPECT_NE(rest.find("\"finish_reason\":\"abort\""), std::string::npos);
  EXPECT_NE(rest.find("data: [DONE]"), std::string::npos);
}

}  // namespace
}  // namespace servesim
