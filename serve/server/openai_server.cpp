#include "serve/server/openai_server.h"

#include <boost/asio/post.hpp>
#include <ctime>

#include "models/config_error.h"
#include "serve/server/byte_tokenizer.h"

namespace servesim {
namespace {

namespace net = boost::asio;
using tcp = net::ip::tcp;

void check_options(const ServeOptions& o) {
  if (o.num_http_threads < 1) throw ConfigError("--http-threads must be >= 1");
  if (o.max_body_bytes < 1) throw ConfigError("--max-request-body-bytes must be >= 1");
  if (o.max_connections < 1) throw ConfigError("--max-connections must be >= 1");
  if (o.max_stream_buffer_bytes < 1) throw ConfigError("--max-stream-buffer-bytes must be >= 1");
  if (!(o.keep_alive_timeout_s > 0)) throw ConfigError("--keep-alive-timeout must be > 0");
  if (!(o.write_timeout_s > 0)) throw ConfigError("--write-timeout must be > 0");
}

tcp::endpoint endpoint_of(const ServeOptions& o) {
  boost::system::error_code ec;
  const net::ip::address address = net::ip::make_address(o.host, ec);
  if (ec) {
    throw ConfigError("--host '" + o.host + "': not an IP address (e.g. 127.0.0.1 or 0.0.0.0)");
  }
  return {address, o.port};
}

// Opens, binds and listens `acceptor` at the options' address; ConfigError naming the flags.
void listen_at(tcp::acceptor& acceptor, const ServeOptions& options) {
  const tcp::endpoint at = endpoint_of(options);
  boost::system::error_code ec;
  acceptor.open(at.protocol(), ec);
  if (!ec) acceptor.set_option(net::socket_base::reuse_address(true), ec);
  if (!ec) acceptor.bind(at, ec);
  if (!ec) acceptor.listen(net::socket_base::max_listen_connections, ec);
  if (ec) {
    throw ConfigError("--host " + options.host + " --port " + std::to_string(options.port) +
                      ": cannot listen (" + ec.message() + "); pick another port, or 0 for any");
  }
}

}  // namespace

void OpenAiServer::check_can_listen(const ServeOptions& options) {
  check_options(options);
  net::io_context io;
  tcp::acceptor probe(io);
  listen_at(probe, options);
}

OpenAiServer::OpenAiServer(std::unique_ptr<Engine> engine, const ServeOptions& options,
                           std::shared_ptr<const Tokenizer> tokenizer)
    : acceptor_(io_) {
  check_options(options);
  const int max_model_len = engine->scheduler().config().max_model_len;
  const int vocab_size = engine->runner().spec().vocab_size;
  metrics_ = std::make_unique<ServeMetrics>(options.served_model_name, max_model_len);
  context_.options = options;
  context_.metrics = metrics_.get();
  context_.tokenizer =
      tokenizer != nullptr ? std::move(tokenizer) : std::make_shared<ByteTokenizer>(vocab_size);
  context_.vocab_size = vocab_size;
  context_.max_model_len = max_model_len;
  context_.created = static_cast<int64_t>(std::time(nullptr));

  listen_at(acceptor_, options);
  port_ = acceptor_.local_endpoint().port();

  worker_ = std::make_unique<EngineWorker>(std::move(engine), *metrics_);
  context_.worker = worker_.get();
  do_accept();
  for (int i = 0; i < options.num_http_threads; ++i) threads_.emplace_back([this] { io_.run(); });
}

OpenAiServer::~OpenAiServer() {
  stop(0);
}

void OpenAiServer::do_accept() {
  acceptor_.async_accept(net::make_strand(io_), [this](boost::system::error_code ec,
                                                       tcp::socket socket) {
    if (ec) {
      if (ec != net::error::operation_aborted) do_accept();  // e.g. out of descriptors
      return;
    }
    boost::system::error_code opt_ec;
    // Each token is a small write: without this, Nagle's algorithm holds it back until the
    // client acknowledges the previous one (40 ms of delayed ACK on Linux). Python's asyncio,
    // under vLLM's uvicorn, sets it too.
    socket.set_option(tcp::no_delay(true), opt_ec);
    if (context_.options.socket_send_buffer_bytes > 0) {
      socket.set_option(
          net::socket_base::send_buffer_size(context_.options.socket_send_buffer_bytes), opt_ec);
    }
    const bool full = context_.connections.load() >= context_.options.max_connections;
    auto session = std::make_shared<HttpSession>(std::move(socket), context_);
    if (full) {
      session->start_rejected();
    } else {
      session->start();
    }
    do_accept();
  });
}

void OpenAiServer::stop(double grace_s) {
  if (stopped_) return;
  stopped_ = true;
  net::post(io_, [this] {
    boost::system::error_code ec;
    acceptor_.close(ec);
  });
  worker_->stop();
  if (grace_s > 0) {
    std::this_thread::sleep_for(std::chrono::duration<double>(grace_s));
  }
  io_.stop();
  for (std::thread& t : threads_) t.join();
  threads_.clear();
}

}  // namespace servesim
