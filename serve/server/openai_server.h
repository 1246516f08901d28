// OpenAiServer: `servesim engine serve` without its command line — an OpenAI-compatible HTTP/1.1
// server (Boost.Beast/Asio) on servesim's Engine. The engine runs on the EngineWorker's thread;
// the io_context runs on num_http_threads threads of its own, one strand per connection, and
// never waits on the engine: requests reach the engine through the worker's inbox, tokens come
// back as handlers posted to their connection's strand.
//
//   OpenAiServer server(std::move(engine), options);  // binds, starts every thread
//   std::printf("port %d\n", server.port());
//   ...
//   server.stop();                                    // or the destructor
//
// Endpoints: POST /v1/completions, POST /v1/chat/completions, GET /v1/models, /health,
// /version, /metrics (docs/serve.md). Ownership: owns the engine (through the worker), the
// metrics and the threads. Thread-safety: port(), worker(), metrics() and stop() from any
// thread.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <cstdint>
#include <memory>
#include <thread>
#include <vector>

#include "engine/runtime/engine.h"
#include "serve/server/engine_worker.h"
#include "serve/server/http_session.h"
#include "serve/server/serve_metrics.h"
#include "serve/server/serve_options.h"
#include "serve/server/tokenizer.h"

namespace servesim {

class OpenAiServer {
 public:
  // Text goes through `tokenizer` (shared, immutable; nullptr: servesim-byte for the model's
  // vocabulary). Throws ConfigError when the address cannot be bound (naming --host/--port) or
  // an option is out of range.
  OpenAiServer(std::unique_ptr<Engine> engine, const ServeOptions& options,
               std::shared_ptr<const Tokenizer> tokenizer = nullptr);
  ~OpenAiServer();
  OpenAiServer(const OpenAiServer&) = delete;
  OpenAiServer& operator=(const OpenAiServer&) = delete;

  // Throws the constructor's ConfigError now when `options` cannot be listened at (a port in
  // use, a bad host), without keeping the port: as vLLM binds its port before it builds the
  // engine (entrypoints/openai/api_server.py, create_server_socket), so a taken port is an
  // error before the weights load rather than after.
  static void check_can_listen(const ServeOptions& options);

  uint16_t port() const { return port_; }  // the bound port (an ephemeral one for port 0)
  EngineWorker& worker() { return *worker_; }
  const ServeMetrics& metrics() const { return *metrics_; }
  int64_t open_connections() const { return context_.connections.load(); }
  int64_t slow_client_aborts() const { return context_.slow_aborts.load(); }

  // Ends every request under way (streams end with finish_reason "abort"), lets the
  // connections write that for up to `grace_s`, then closes them and joins every thread.
  // Idempotent.
  void stop(double grace_s = 0.2);

 private:
  void do_accept();

  std::unique_ptr<ServeMetrics> metrics_;
  std::unique_ptr<EngineWorker> worker_;
  ServeContext context_;
  boost::asio::io_context io_;
  boost::asio::ip::tcp::acceptor acceptor_;
  uint16_t port_ = 0;
  std::vector<std::thread> threads_;
  bool stopped_ = false;
};

}  // namespace servesim
