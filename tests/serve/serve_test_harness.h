// Test helpers of the serve suite: a tiny byte-tokenizer model served by an OpenAiServer on an
// ephemeral loopback port, and a blocking HTTP client (Boost.Beast) to talk to it.
#pragma once

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <chrono>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "engine/runtime/engine.h"
#include "engine/runtime/weights.h"
#include "models/model_spec.h"
#include "serve/server/openai_server.h"

namespace servesim::testing {

// Llama-shaped and tiny (a step takes well under a millisecond), with a vocabulary that holds
// every byte of the byte tokenizer.
inline ModelSpec serve_model_spec() {
  ModelSpec m;
  m.name = "tiny-serve";
  m.family = "llama";
  m.hidden_size = 32;
  m.num_layers = 2;
  m.num_heads = 4;
  m.num_kv_heads = 2;
  m.head_dim = 8;
  m.intermediate_size = 48;
  m.vocab_size = 320;
  m.max_position_embeddings = 8192;
  return m;
}

inline SchedulerConfig serve_scheduler_config() {
  SchedulerConfig c;
  c.max_num_seqs = 16;
  c.max_num_batched_tokens = 512;
  c.max_model_len = 512;
  c.block_size = 4;
  c.num_gpu_blocks = 16 * 128 + 1;
  return c;
}

// Room for one sequence of `max_model_len` tokens per max_num_seqs: a long generation that a
// test cuts short.
inline SchedulerConfig long_scheduler_config(int max_model_len = 8192) {
  SchedulerConfig c = serve_scheduler_config();
  c.max_model_len = max_model_len;
  c.num_gpu_blocks = int64_t{c.max_num_seqs} * (max_model_len / c.block_size) + 1;
  return c;
}

inline ServeOptions serve_test_options() {
  ServeOptions o;
  o.port = 0;
  o.served_model_name = "tiny-serve";
  o.model_root = "tiny-serve";
  o.version = "test";
  return o;
}

// The weights, then the server over them (the CPU engine borrows its weights).
class ServeHarness {
 public:
  explicit ServeHarness(const ServeOptions& options = serve_test_options(),
                        const SchedulerConfig& scheduler = serve_scheduler_config())
      : weights_(Weights::random(serve_model_spec(), 7)) {
    auto engine = std::make_unique<Engine>(weights_, EngineOptions{scheduler, 1, false});
    server_ = std::make_unique<OpenAiServer>(std::move(engine), options);
  }
  OpenAiServer& server() { return *server_; }
  uint16_t port() const { return server_->port(); }

  // Waits (up to `timeout`) until no job is live; the snapshot after.
  EngineSnapshot wait_idle(std::chrono::seconds timeout = std::chrono::seconds(20)) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    EngineSnapshot s = server_->worker().snapshot();
    while ((s.live_jobs > 0 || s.stats.num_running + s.stats.num_waiting > 0) &&
           std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
      s = server_->worker().snapshot();
    }
    return s;
  }

 private:
  Weights weights_;
  std::unique_ptr<OpenAiServer> server_;
};

struct HttpReply {
  int status = 0;
  std::string content_type;
  std::string allow;
  std::string body;
  nlohmann::json json() const { return nlohmann::json::parse(body); }
};

// Connects to the server on loopback; a connect a signal interrupts (libFuzzer's timer, in
// fuzz_serve_http) is tried again. Throws boost::system::system_error otherwise.
inline boost::asio::ip::tcp::socket connect_to(boost::asio::io_context& io, uint16_t port) {
  boost::asio::ip::tcp::socket socket(io);
  const boost::asio::ip::tcp::endpoint server(boost::asio::ip::make_address("127.0.0.1"), port);
  boost::system::error_code ec;
  do {
    socket.close(ec);
    socket.connect(server, ec);
  } while (ec == boost::asio::error::interrupted);
  if (ec) throw boost::system::system_error(ec, "connect");
  return socket;
}

// One request on a fresh connection; the whole response (chunked bodies joined).
inline HttpReply http_call(uint16_t port, boost::beast::http::verb method,
                           const std::string& target, const std::string& body = "") {
  namespace http = boost::beast::http;
  boost::asio::io_context io;
  boost::asio::ip::tcp::socket socket = connect_to(io, port);
  http::request<http::string_body> req{method, target, 11};
  req.set(http::field::host, "127.0.0.1");
  req.set(http::field::content_type, "application/json");
  req.body() = body;
  req.prepare_payload();
  http::write(socket, req);
  boost::beast::flat_buffer buffer;
  http::response_parser<http::string_body> parser;
  parser.body_limit(64 << 20);
  http::read(socket, buffer, parser);
  const auto& res = parser.get();
  HttpReply reply;
  reply.status = static_cast<int>(res.result_int());
  reply.content_type = std::string(res[http::field::content_type]);
  reply.allow = std::string(res[http::field::allow]);
  reply.body = res.body();
  boost::system::error_code ec;
  socket.shutdown(boost::asio::ip::tcp::socket::shutdown_both, ec);
  return reply;
}

inline HttpReply post_json(uint16_t port, const std::string& target, const nlohmann::json& body) {
  return http_call(port, boost::beast::http::verb::post, target, body.dump());
}

// The `data:` payloads of a server-sent-events body, in order ("[DONE]" included as a string).
inline std::vector<std::string> sse_events(const std::string& body) {
  std::vector<std::string> events;
  size_t at = 0;
  while ((at = body.find("data: ", at)) != std::string::npos) {
    const size_t end = body.find("\n\n", at);
    events.push_back(body.substr(at + 6, end - at - 6));
    at = end;
  }
  return events;
}

}  // namespace servesim::testing
