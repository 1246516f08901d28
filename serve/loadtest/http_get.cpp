#include "serve/loadtest/http_get.h"

namespace servesim {

net::asio::awaitable<HttpAnswer> http_get(const net::tcp::resolver::results_type& endpoints,
                                          const std::string& host_header, const std::string& target,
                                          double timeout_s, size_t max_bytes) {
  namespace http = net::http;
  HttpAnswer answer;
  net::beast::tcp_stream stream(co_await net::asio::this_coro::executor);
  stream.expires_after(
      std::chrono::duration_cast<net::Clock::duration>(std::chrono::duration<double>(timeout_s)));
  boost::system::error_code ec;
  co_await stream.async_connect(endpoints, net::with_ec(ec));
  if (!ec) {
    http::request<http::empty_body> request(http::verb::get, target, 11);
    request.set(http::field::host, host_header);
    request.set(http::field::user_agent, "servesim-loadtest");
    request.keep_alive(false);
    co_await http::async_write(stream, request, net::with_ec(ec));
  }
  http::response_parser<http::string_body> parser;
  parser.body_limit(max_bytes);
  if (!ec) {
    net::beast::flat_buffer buffer;
    co_await http::async_read(stream, buffer, parser, net::with_ec(ec));
  }
  if (ec) {
    answer.error = "GET " + target + ": " + ec.message();
    co_return answer;
  }
  answer.status = static_cast<int>(parser.get().result_int());
  answer.body = std::move(parser.get().body());
  stream.socket().shutdown(net::tcp::socket::shutdown_both, ec);
  co_return answer;
}

}  // namespace servesim
