#include "fake_server_runner.h"

#include "serve/loadtest/asio_config.h"

namespace servesim::testing {
namespace {

namespace asio = net::asio;
namespace http = net::http;
using boost::system::error_code;

std::string chunk_json(const std::string& path, int index) {
  nlohmann::json j = {{"id", "cmpl-fake"}, {"object", "text_completion"}};
  if (path == "/v1/chat/completions") {
    j["choices"] = {{{"index", 0}, {"delta", {{"content", "t" + std::to_string(index)}}}}};
  } else {
    j["choices"] = {{{"index", 0}, {"text", "t" + std::to_string(index)}}};
  }
  return "data: " + j.dump() + "\n\n";
}

}  // namespace

struct FakeOpenAiServer::Impl {
  explicit Impl(FakeOpenAiServer& s) : server(s), acceptor(io) {}

  asio::awaitable<void> accept_loop() {
    for (;;) {
      error_code ec;
      net::tcp::socket socket(io);
      co_await acceptor.async_accept(socket, net::with_ec(ec));
      if (ec) co_return;
      ++server.connections_;
      socket.set_option(net::tcp::no_delay(true), ec);  // no Nagle delay between chunks
      asio::co_spawn(io, session(net::beast::tcp_stream(std::move(socket))), asio::detached);
    }
  }

  asio::awaitable<void> wait_s(double seconds) {
    asio::steady_timer timer(io, std::chrono::duration_cast<net::Clock::duration>(
                                     std::chrono::duration<double>(seconds)));
    error_code ec;
    co_await timer.async_wait(net::with_ec(ec));
  }

  asio::awaitable<void> session(net::beast::tcp_stream stream) {
    net::beast::flat_buffer buffer;
    for (;;) {
      http::request<http::string_body> request;
      error_code ec;
      co_await http::async_read(stream, buffer, request, net::with_ec(ec));
      if (ec) co_return;
      const bool keep = co_await answer(stream, request);
      if (!keep || server.options_.drop_idle) {
        stream.socket().shutdown(net::tcp::socket::shutdown_both, ec);
        co_return;
      }
    }
  }

  asio::awaitable<bool> send(net::beast::tcp_stream& stream,
                             const http::request<http::string_body>& request, int status,
                             const std::string& type, std::string body) {
    http::response<http::string_body> res(static_cast<http::status>(status), 11);
    res.set(http::field::content_type, type);
    res.keep_alive(request.keep_alive());
    res.body() = std::move(body);
    res.prepare_payload();
    error_code ec;
    co_await http::async_write(stream, res, net::with_ec(ec));
    co_return !ec && request.keep_alive();
  }

  asio::awaitable<bool> answer(net::beast::tcp_stream& stream,
                               const http::request<http::string_body>& request) {
    const std::string target(request.target());
    const FakeServerOptions& o = server.options_;
    if (request.method() == http::verb::get && target == "/v1/models") {
      nlohmann::json models = {{"object", "list"},
                               {"data", {{{"id", o.model_id}, {"object", "model"}}}}};
      co_return co_await send(stream, request, 200, "application/json", models.dump());
    }
    if (request.method() == http::verb::get && target == "/version") {
      co_return co_await send(stream, request, 200, "application/json", o.version_body);
    }
    if (request.method() == http::verb::get && target == "/metrics" && o.metrics) {
      ++server.scrapes_;
      const std::string text =
          "# HELP vllm:num_requests_running Running.\n# TYPE vllm:num_requests_running gauge\n"
          "vllm:num_requests_running{model_name=\"" +
          o.model_id + "\"} " + std::to_string(server.active_.load()) +
          "\nvllm:num_requests_waiting{model_name=\"" + o.model_id + "\"} 0\n";
      co_return co_await send(stream, request, 200, "text/plain; version=0.0.4", text);
    }
    if (request.method() == http::verb::post &&
        (target == "/v1/completions" || target == "/v1/chat/completions")) {
      co_return co_await complete(stream, request, target);
    }
    co_return co_await send(stream, request, 404, "application/json",
                            R"({"error":{"message":"not found"}})");
  }

  asio::awaitable<bool> complete(net::beast::tcp_stream& stream,
                                 const http::request<http::string_body>& request,
                                 const std::string& path) {
    const uint64_t n = server.completions_++;
    const nlohmann::json body = nlohmann::json::parse(request.body(), nullptr, false);
    {
      std::lock_guard<std::mutex> lock(server.mutex_);
      server.last_body_ = body;
    }
    const FakeServerOptions& o = server.options_;
    if (auto it = o.status.find(n); it != o.status.end()) {
      co_return co_await send(stream, request, it->second, "application/json",
                              R"({"error":{"message":"injected"}})");
    }
    if (o.hang.count(n)) {
      co_await wait_s(3600);
      co_return false;
    }
    ++server.active_;
    const bool keep = co_await stream_tokens(stream, request, path, n, body);
    --server.active_;
    co_return keep;
  }

  asio::awaitable<bool> stream_tokens(net::beast::tcp_stream& stream,
                                      const http::request<http::string_body>& request,
                                      const std::string& path, uint64_t n,
                                      const nlohmann::json& body) {
    const FakeServerOptions& o = server.options_;
    const int tokens = body.is_object() ? body.value("max_tokens", 1) : 1;
    http::response<http::empty_body> res(http::status::ok, 11);
    res.set(http::field::content_type, "text/event-stream");
    res.chunked(true);
    res.keep_alive(request.keep_alive());
    http::response_serializer<http::empty_body> serializer(res);
    error_code ec;
    co_await http::async_write_header(stream, serializer, net::with_ec(ec));
    for (int i = 0; i < tokens && !ec; ++i) {
      co_await wait_s(o.token_delay_s);
      const std::string event = chunk_json(path, i);
      co_await asio::async_write(stream, http::make_chunk(asio::buffer(event)), net::with_ec(ec));
      if (i == 0 && o.reset_mid_stream.count(n)) {
        stream.socket().set_option(asio::socket_base::linger(true, 0), ec);
        stream.socket().close(ec);
        co_return false;
      }
      if (i == 0 && o.malformed.count(n)) {
        const std::string bad = "data: {not json\n\n";
        co_await asio::async_write(stream, http::make_chunk(asio::buffer(bad)), net::with_ec(ec));
      }
    }
    std::string tail;
    if (o.usage) {
      const int prompt = body.is_object() && body.contains("prompt") && body["prompt"].is_array()
                             ? static_cast<int>(body["prompt"].size())
                             : 0;
      nlohmann::json usage = {
          {"choices", nlohmann::json::array()},
          {"usage", {{"prompt_tokens", prompt}, {"completion_tokens", tokens}}}};
      tail += "data: " + usage.dump() + "\n\n";
    }
    tail += "data: [DONE]\n\n";
    co_await asio::async_write(stream, http::make_chunk(asio::buffer(tail)), net::with_ec(ec));
    co_await asio::async_write(stream, http::make_chunk_last(), net::with_ec(ec));
    co_return !ec && request.keep_alive();
  }

  FakeOpenAiServer& server;
  asio::io_context io;
  net::tcp::acceptor acceptor;
};

FakeOpenAiServer::FakeOpenAiServer(FakeServerOptions options)
    : options_(std::move(options)), impl_(std::make_unique<Impl>(*this)) {
  const net::tcp::endpoint endpoint(asio::ip::make_address("127.0.0.1"), 0);
  impl_->acceptor.open(endpoint.protocol());
  impl_->acceptor.set_option(asio::socket_base::reuse_address(true));
  impl_->acceptor.bind(endpoint);
  impl_->acceptor.listen();
  port_ = impl_->acceptor.local_endpoint().port();
  asio::co_spawn(impl_->io, impl_->accept_loop(), asio::detached);
  thread_ = std::thread([this] { impl_->io.run(); });
}

FakeOpenAiServer::~FakeOpenAiServer() {
  impl_->io.stop();
  thread_.join();
}

nlohmann::json FakeOpenAiServer::last_body() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return last_body_;
}

int unused_port() {
  asio::io_context io;
  net::tcp::acceptor acceptor(io, net::tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0));
  const int port = acceptor.local_endpoint().port();
  acceptor.close();
  return port;
}

}  // namespace servesim::testing
