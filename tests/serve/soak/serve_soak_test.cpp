// A bounded soak on loopback: 48 clients stream completions back to back for 20 s (override
// with SERVESIM_SOAK_S), one request in ten leaving mid-stream; no request may be lost and no
// KV block leaked.
#include <gtest/gtest.h>

#include <atomic>
#include <boost/asio/write.hpp>
#include <cstdlib>
#include <future>
#include <optional>

#include "base/xoshiro256.h"
#include "tests/serve/serve_test_harness.h"

namespace servesim {
namespace {

namespace http = boost::beast::http;
namespace net = boost::asio;
using nlohmann::json;
using tcp = net::ip::tcp;

constexpr int kClients = 48;

double soak_seconds() {
  const char* s = std::getenv("SERVESIM_SOAK_S");
  return s != nullptr ? std::atof(s) : 20.0;
}

struct ClientCounts {
  int64_t completed = 0;  // every token, the usage chunk and [DONE] arrived
  int64_t left = 0;       // the client left mid-stream on purpose
  int64_t broken = 0;     // anything else: a lost or short request
  int64_t tokens = 0;
};

// One client: keep-alive requests back to back until the deadline; a request it leaves costs
// it its connection.
ClientCounts run_client(uint16_t port, int index, std::chrono::steady_clock::time_point until) {
  ClientCounts c;
  Xoshiro256 rng(1000 + index);
  net::io_context io;
  std::optional<tcp::socket> socket;
  boost::beast::flat_buffer buffer;
  while (std::chrono::steady_clock::now() < until) {
    if (!socket) socket.emplace(testing::connect_to(io, port));
    const int max_tokens = 8 + static_cast<int>(rng.next() % 57);
    std::vector<int> prompt(4 + rng.next() % 60);
    for (int& t : prompt) t = 1 + static_cast<int>(rng.next() % 256);
    const bool leave = rng.next() % 10 == 0;
    http::request<http::string_body> req{http::verb::post, "/v1/completions", 11};
    req.set(http::field::host, "127.0.0.1");
    req.body() = json{{"prompt", prompt},
                      {"max_tokens", max_tokens},
                      {"ignore_eos", true},
                      {"stream", true},
                      {"stream_options", {{"include_usage", true}}}}
                     .dump();
    req.prepare_payload();
    boost::system::error_code ec;
    http::write(*socket, req, ec);
    http::response_parser<http::string_body> parser;
    parser.body_limit(1 << 24);
    if (!ec && leave) {
      http::read_header(*socket, buffer, parser, ec);
      socket.reset();
      buffer.clear();
      ++c.left;
      continue;
    }
    if (!ec) http::read(*socket, buffer, parser, ec);
    if (ec) {
      std::fprintf(stderr, "soak client %d: %s\n", index, ec.message().c_str());
      ++c.broken;
      socket.reset();
      buffer.clear();
      continue;
    }
    const std::vector<std::string> events = testing::sse_events(parser.get().body());
    const bool whole =
        events.size() == static_cast<size_t>(max_tokens) + 2 && events.back() == "[DONE]" &&
        json::parse(events[events.size() - 2])["usage"]["completion_tokens"] == max_tokens;
    if (!whole) {
      std::fprintf(stderr, "soak client %d: %zu events for %d tokens: %s\n", index, events.size(),
                   max_tokens, parser.get().body().substr(0, 300).c_str());
    }
    ++(whole ? c.completed : c.broken);
    c.tokens += max_tokens;
  }
  return c;
}

TEST(ServeSoak, ConcurrentStreamsLoseNothingAndLeakNoBlock) {
  SchedulerConfig sc = testing::serve_scheduler_config();
  sc.max_num_seqs = 32;
  sc.num_gpu_blocks = 32 * 32 + 1;  // 128 tokens a sequence: preemptions happen too
  ServeOptions o = testing::serve_test_options();
  o.num_http_threads = 2;
  testing::ServeHarness h(o, sc);
  const auto start = std::chrono::steady_clock::now();
  const auto until = start + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                 std::chrono::duration<double>(soak_seconds()));
  std::vector<std::future<ClientCounts>> clients;
  for (int i = 0; i < kClients; ++i) {
    clients.push_back(std::async(std::launch::async, run_client, h.port(), i, until));
  }
  ClientCounts total;
  for (auto& f : clients) {
    const ClientCounts c = f.get();
    total.completed += c.completed;
    total.left += c.left;
    total.broken += c.broken;
    total.tokens += c.tokens;
  }
  const double wall_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf(
      "soak: %lld completed, %lld left on purpose, %lld broken, %.0f requests/s, %.0f "
      "tokens/s over %.1f s\n",
      static_cast<long long>(total.completed), static_cast<long long>(total.left),
      static_cast<long long>(total.broken), total.completed / wall_s, total.tokens / wall_s,
      wall_s);
  EXPECT_EQ(total.broken, 0);
  EXPECT_GT(total.completed, kClients);
  const EngineSnapshot s = h.wait_idle();
  EXPECT_EQ(s.live_jobs, 0);
  EXPECT_EQ(s.kv_free_blocks, s.kv_usable_blocks);
  EXPECT_TRUE(s.invariants_ok);
  // Every request ended once in the engine: served to the end, or aborted when its client
  // left (one that left after its last token counts as served).
  const std::string metrics = h.server().metrics().render();
  auto success = [&](const std::string& reason) {
    const std::string key =
        "vllm:request_success_total{model_name=\"tiny-serve\",engine=\"0\","
        "finished_reason=\"" +
        reason + "\"} ";
    const size_t at = metrics.find(key);
    return at == std::string::npos ? -1 : std::stoll(metrics.substr(at + key.size()));
  };
  EXPECT_EQ(success("length") + success("abort"), total.completed + total.left);
  EXPECT_GE(success("length"), total.completed);
}

}  // namespace
}  // namespace servesim
