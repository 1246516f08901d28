// ServeOptions: the HTTP side of `servesim engine serve` — where it listens, what it calls the
// model, and the bounds that keep one client from hurting the others. A plain value type.
#pragma once

#include <cstdint>
#include <string>

namespace servesim {

struct ServeOptions {
  std::string host = "127.0.0.1";  // address to bind (vLLM --host)
  uint16_t port = 8000;            // 0: an ephemeral port (HttpServer::port() says which)
  std::string served_model_name;   // the "model" clients send and responses carry
  std::string model_root;          // what --model named: "root" of the /v1/models card
  std::string version;             // GET /version
  int num_http_threads = 1;        // threads running the io_context. REQUIRES: >= 1
  int64_t max_body_bytes = int64_t{1} << 20;  // larger request bodies get 413
  int max_connections = 1024;  // further connections get 503 and are closed. REQUIRES: >= 1
  // Bytes of one stream's output the client has not taken yet (queued in servesim, beyond the
  // kernel's socket buffer) past which its request is aborted and the connection closed: a
  // client that stops reading costs bounded memory and never slows the engine.
  int64_t max_stream_buffer_bytes = int64_t{1} << 20;
  double keep_alive_timeout_s = 60;  // an idle connection (no request under way) is closed
  double write_timeout_s = 30;       // one write the client does not take in this long: closed
  int socket_send_buffer_bytes = 0;  // SO_SNDBUF of accepted sockets; 0: the system's (tests)
};

}  // namespace servesim
