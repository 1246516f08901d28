// http_get(): one GET on a fresh connection with a deadline — how the load generator asks
// the endpoint for /v1/models, /version and /metrics beside the load. Failures come back in
// HttpAnswer::error, never as exceptions. Thread-safety: none (runs on the caller's
// io_context thread).
#pragma once

#include <cstddef>
#include <string>

#include "serve/loadtest/asio_config.h"

namespace servesim {

struct HttpAnswer {
  int status = 0;     // 0 when no answer came
  std::string body;   // at most max_bytes
  std::string error;  // non-empty when no complete answer came (connect, timeout, too long)
  bool ok() const { return error.empty() && status == 200; }
};

net::asio::awaitable<HttpAnswer> http_get(const net::tcp::resolver::results_type& endpoints,
                                          const std::string& host_header, const std::string& target,
                                          double timeout_s, size_t max_bytes);

}  // namespace servesim
