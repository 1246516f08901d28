// The Boost.Asio/Beast headers the load generator is built on, included in one order.
// Boost 1.74's asio/awaitable.hpp uses std::exchange without including <utility>, so
// <utility> comes first (fixed in later Boost releases).
#pragma once

// clang-format off
#include <utility>
#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
// clang-format on

namespace servesim::net {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = boost::beast::http;
using tcp = boost::asio::ip::tcp;
using Clock = std::chrono::steady_clock;

// Completion token of every coroutine here: errors come back in `ec`, never as exceptions.
inline auto with_ec(boost::system::error_code& ec) {
  return asio::redirect_error(asio::use_awaitable, ec);
}

}  // namespace servesim::net
