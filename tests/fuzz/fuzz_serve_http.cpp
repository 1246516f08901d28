// libFuzzer target: raw bytes a client sends to `servesim engine serve` — Boost.Beast's
// HTTP/1.1 framing as HttpSession drives it (request line, headers and their limit,
// Content-Length and chunked bodies and the body limit, "Expect: 100-continue", pipelined
// keep-alive requests), the routes, and the generation handlers down to the engine. One server
// (the serve tests' tiny CPU model, byte tokenizer, max_model_len 64) starts before the first
// input; each input is written to a new loopback connection; once every whole request in it is
// answered (or the server closed), the client half-closes.
//
// The contract is the server's: it answers with well-formed HTTP/1.1 responses, none with a
// body after a HEAD request, at most one per request it read plus one for a request it
// refused; never a 5xx but 503; and it ends the connection (after the client's end) well
// within the input's second. A crash, sanitizer report, leak or hang anywhere in the server is
// a finding too.
#include <signal.h>
#include <sys/socket.h>
#include <sys/time.h>

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "tests/serve/serve_test_harness.h"

namespace {

namespace http = boost::beast::http;
namespace net = boost::asio;

constexpr int kMaxModelLen = 64;  // tokens, prompt and output
// Per input, beyond libFuzzer's -timeout=1: its timeout is the one that reports a slow input
// (scripts/fuzz.sh runs such an input again alone before calling it a finding, as a process at
// nice 19 can be starved); this one only stops a wait that would otherwise never end.
constexpr int kDeadlineMs = 5000;

servesim::testing::ServeHarness* harness = nullptr;

[[noreturn]] void finding(const std::string& what) {
  std::fprintf(stderr, "fuzz_serve_http: %s\n", what.c_str());
  std::abort();
}

// The requests in `bytes` as the server reads them, parsed with the server's limits: the methods
// of those it reads whole, in order, up to the first that does not parse (the server answers
// that one with an error, or closes on an incomplete one at the client's end) — whose header,
// when it was read, says whether the refusal answers a HEAD (and so has no body).
struct Requests {
  std::vector<http::verb> whole;
  bool refused_is_head = false;

  bool is_head(size_t response) const {
    return response < whole.size() ? whole[response] == http::verb::head : refused_is_head;
  }
};

Requests requests_in(std::string_view bytes) {
  Requests requests;
  while (!bytes.empty()) {
    http::request_parser<http::string_body> parser;
    parser.eager(true);
    parser.header_limit(servesim::HttpSession::kHeaderLimitBytes);
    parser.body_limit(
        static_cast<uint64_t>(servesim::testing::serve_test_options().max_body_bytes));
    boost::beast::error_code ec;
    const size_t used = parser.put(net::buffer(bytes.data(), bytes.size()), ec);
    if (ec || !parser.is_done()) {
      requests.refused_is_head =
          parser.is_header_done() && parser.get().method() == http::verb::head;
      break;
    }
    requests.whole.push_back(parser.get().method());
    bytes.remove_prefix(used);
  }
  return requests;
}

using Clock = std::chrono::steady_clock;

// Appends what the server sends next to `received`; false once it closed the connection.
bool read_more(net::ip::tcp::socket& socket, std::string& received, Clock::time_point deadline) {
  for (;;) {
    const auto left =
        std::chrono::duration_cast<std::chrono::microseconds>(deadline - Clock::now());
    if (left.count() <= 0)
      finding("the server neither answered every request nor closed within " +
              std::to_string(kDeadlineMs) + " ms");
    const timeval tv{static_cast<time_t>(left.count() / 1000000),
                     static_cast<suseconds_t>(left.count() % 1000000)};
    setsockopt(socket.native_handle(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    char chunk[16384];
    const ssize_t n = ::recv(socket.native_handle(), chunk, sizeof chunk, 0);
    if (n > 0) {
      received.append(chunk, static_cast<size_t>(n));
      return true;
    }
    if (n == 0 || errno == ECONNRESET) return false;
    if (errno != EINTR && errno != EAGAIN && errno != EWOULDBLOCK)
      finding(std::string("reading the answer failed: ") + std::strerror(errno));
  }
}

// The input, as far as the server takes it (it may close after refusing a request); a write
// libFuzzer's timer interrupts (SIGALRM, every second) goes on.
void write_all(net::ip::tcp::socket& socket, std::string_view bytes) {
  boost::system::error_code ec;
  while (!bytes.empty()) {
    bytes.remove_prefix(net::write(socket, net::buffer(bytes.data(), bytes.size()), ec));
    if (ec && ec != net::error::interrupted) return;
  }
}

// The final (non-1xx) responses `bytes` holds whole, each checked, for `requests` in
// order; a response still arriving at the end is left for later, unless `closed`.
size_t responses_in(std::string_view bytes, const Requests& requests, bool closed) {
  size_t answered = 0;
  while (!bytes.empty()) {
    http::response_parser<http::string_body> parser;
    parser.eager(true);
    parser.body_limit(64u << 20);
    // A response to HEAD has the header of the GET's but no body.
    if (requests.is_head(answered)) parser.skip(true);
    boost::beast::error_code ec;
    const size_t used = parser.put(net::buffer(bytes.data(), bytes.size()), ec);
    if (ec == http::error::need_more || (!ec && !parser.is_done())) {
      if (!closed) return answered;
      finding("response " + std::to_string(answered + 1) + " is cut short");
    }
    if (ec)
      finding("response " + std::to_string(answered + 1) +
              " is not well-formed HTTP: " + ec.message());
    const unsigned status = parser.get().result_int();
    bytes.remove_prefix(used);
    if (status >= 100 && status < 200) continue;
    if (status >= 500 && status != 503)
      finding("status " + std::to_string(status) + " (the server blames itself)");
    ++answered;
  }
  if (answered > requests.whole.size() + 1)
    finding(std::to_string(answered) + " responses to " + std::to_string(requests.whole.size()) +
            " requests");
  return answered;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  signal(SIGPIPE, SIG_IGN);  // the server may close before the whole input is written
  // A short context bounds a generation that asks for no limit to well under the 1 s budget.
  servesim::SchedulerConfig scheduler = servesim::testing::serve_scheduler_config();
  scheduler.max_model_len = kMaxModelLen;
  harness = new servesim::testing::ServeHarness(servesim::testing::serve_test_options(), scheduler);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const Requests requests = requests_in(input);
  const Clock::time_point deadline = Clock::now() + std::chrono::milliseconds(kDeadlineMs);
  net::io_context io;
  net::ip::tcp::socket socket = servesim::testing::connect_to(io, harness->port());
  write_all(socket, input);
  // Every whole request answered (a client that leaves earlier cancels its generation), then
  // the client's end, after which the server answers what is left and closes.
  std::string received;
  bool open = true;
  while (open && responses_in(received, requests, false) < requests.whole.size())
    open = read_more(socket, received, deadline);
  boost::system::error_code ec;
  socket.shutdown(net::ip::tcp::socket::shutdown_send, ec);
  while (open) open = read_more(socket, received, deadline);
  responses_in(received, requests, true);
  return 0;
}
