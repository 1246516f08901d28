#include "serve/loadtest/completion_call.h"

#include <array>
#include <limits>

#include "serve/loadtest/sse_decoder.h"

namespace servesim {
namespace {

using boost::system::error_code;
namespace asio = net::asio;
namespace http = net::http;

constexpr size_t kErrorBodyBytes = 512;  // of a non-200 answer kept for the detail line

bool is_http_error(const error_code& ec) {
  return &ec.category() == &http::make_error_code(http::error::bad_version).category();
}

// The connection went away under us (not a malformed answer).
bool is_closed(const error_code& ec) {
  return ec == asio::error::eof || ec == asio::error::connection_reset ||
         ec == asio::error::broken_pipe || ec == asio::error::connection_aborted ||
         ec == http::error::end_of_stream || ec == http::error::partial_message;
}

}  // namespace

CompletionCall::CompletionCall(ConnectionPool& pool, const CallTarget& target, RequestSpec spec,
                               std::string body, double timeout_s)
    : pool_(pool),
      target_(target),
      body_(std::move(body)),
      deadline_(target.start + std::chrono::duration_cast<net::Clock::duration>(
                                   std::chrono::duration<double>(spec.arrival_s + timeout_s))),
      waiter_(pool.executor()) {
  result_.spec = std::move(spec);
}

double CompletionCall::now_s() const {
  return std::chrono::duration<double>(net::Clock::now() - target_.start).count();
}

void CompletionCall::cancel() {
  cancelled_ = true;
  waiter_.cancel();
  if (lease_.stream) lease_.stream->cancel();
}

asio::awaitable<void> CompletionCall::run() {
  for (int tries = 0; tries < 2 && !cancelled_; ++tries) {
    if (co_await attempt() == Attempt::kDone) break;
  }
  if (cancelled_) fail(ErrorCause::kCancelled, "the load test stopped while it was in flight");
}

void CompletionCall::fail(ErrorCause cause, std::string detail) {
  if (result_.cause != ErrorCause::kNone) return;  // the first cause stands
  result_.cause = cause;
  result_.detail = std::move(detail);
}

void CompletionCall::fail(const error_code& ec, const char* during) {
  ErrorCause cause = ErrorCause::kNetwork;
  if (cancelled_)
    cause = ErrorCause::kCancelled;
  else if (ec == net::beast::error::timeout)
    cause = ErrorCause::kTimeout;
  else if (ec == asio::error::connection_refused)
    cause = ErrorCause::kRefused;
  else if (is_closed(ec))
    cause = ErrorCause::kReset;
  else if (is_http_error(ec))
    cause = ErrorCause::kMalformed;
  fail(cause, std::string(during) + ": " + ec.message());
}

void CompletionCall::release(bool keep) {
  if (lease_.stream) pool_.release(std::move(lease_.stream), keep);
  lease_ = {};
}

asio::awaitable<bool> CompletionCall::connect() {
  lease_.stream->expires_at(deadline_);
  error_code ec;
  co_await lease_.stream->async_connect(target_.endpoints, net::with_ec(ec));
  if (ec) {
    fail(ec, "connect");
    release(false);
    co_return false;
  }
  lease_.stream->socket().set_option(net::tcp::no_delay(true), ec);
  co_return true;
}

asio::awaitable<CompletionCall::Attempt> CompletionCall::attempt() {
  lease_ = co_await pool_.acquire(waiter_, deadline_, cancelled_);
  if (!lease_.stream) {
    if (!cancelled_) fail(ErrorCause::kTimeout, "no connection came free within --timeout-s");
    co_return Attempt::kDone;
  }
  result_.reused_connection = lease_.reused;
  if (!lease_.reused && !co_await connect()) co_return Attempt::kDone;
  lease_.stream->expires_at(deadline_);

  http::request<http::string_body> request(http::verb::post, target_.target, 11);
  request.set(http::field::host, target_.host_header);
  request.set(http::field::user_agent, "servesim-loadtest");
  request.set(http::field::content_type, "application/json");
  request.set(http::field::accept, "text/event-stream");
  request.keep_alive(true);
  request.body() = body_;
  request.prepare_payload();
  error_code ec;
  co_await http::async_write(*lease_.stream, request, net::with_ec(ec));
  const bool stale = lease_.reused && !cancelled_;
  if (ec && stale && is_closed(ec)) {
    release(false);
    co_return Attempt::kRetry;
  }
  if (ec) {
    fail(ec, "sending the request");
    release(false);
    co_return Attempt::kDone;
  }
  result_.sent_s = now_s();

  http::response_parser<http::buffer_body> parser;
  parser.body_limit(std::numeric_limits<std::uint64_t>::max());
  buffer_.clear();
  co_await http::async_read_header(*lease_.stream, buffer_, parser, net::with_ec(ec));
  if (ec && stale && buffer_.size() == 0 && is_closed(ec)) {
    release(false);
    co_return Attempt::kRetry;
  }
  if (ec) {
    fail(ec, "reading the response header");
    release(false);
    co_return Attempt::kDone;
  }
  result_.http_status = static_cast<int>(parser.get().result_int());
  if (result_.http_status == 200) {
    co_await read_stream(parser);
  } else {
    co_await read_error_body(parser);
  }
  co_return Attempt::kDone;
}

asio::awaitable<void> CompletionCall::read_stream(
    http::response_parser<http::buffer_body>& parser) {
  std::array<char, 16384> bytes;
  std::vector<std::string> events;
  SseDecoder sse;
  error_code ec;
  while (!parser.is_done() && result_.ok()) {
    parser.get().body().data = bytes.data();
    parser.get().body().size = bytes.size();
    co_await http::async_read_some(*lease_.stream, buffer_, parser, net::with_ec(ec));
    if (ec == http::error::need_buffer) ec = {};
    if (ec) {
      fail(ec, "reading the event stream");
      break;
    }
    const size_t n = bytes.size() - parser.get().body().size;
    const double t = now_s();
    if (!sse.feed(std::string_view(bytes.data(), n), events)) {
      fail(ErrorCause::kMalformed, sse.error());
    }
    for (const std::string& data : events) on_event(data, t);
    events.clear();
  }
  finish_stream(parser.is_done() && result_.ok());
  release(result_.ok() && parser.keep_alive());
}

void CompletionCall::on_event(const std::string& data, double now_s) {
  if (!result_.ok()) return;
  const StreamChunk chunk = parse_stream_chunk(data, target_.api);
  if (!chunk.error.empty()) {
    fail(chunk.server_error ? ErrorCause::kStreamError : ErrorCause::kMalformed, chunk.error);
    return;
  }
  if (chunk.has_token) {
    if (result_.token_chunks > 0)
      result_.gaps_s.push_back(now_s - result_.last_token_s);
    else
      result_.first_token_s = now_s;
    result_.last_token_s = now_s;
    ++result_.token_chunks;
  }
  if (chunk.prompt_tokens) result_.usage_prompt_tokens = chunk.prompt_tokens;
  if (chunk.completion_tokens) result_.usage_completion_tokens = chunk.completion_tokens;
  saw_done_ |= chunk.done;
}

void CompletionCall::finish_stream(bool body_done) {
  if (!body_done) return;
  if (!saw_done_)
    fail(ErrorCause::kMalformed, "the event stream ended without data: [DONE]");
  else if (result_.token_chunks == 0)
    fail(ErrorCause::kMalformed, "the stream carried no output");
}

asio::awaitable<void> CompletionCall::read_error_body(
    http::response_parser<http::buffer_body>& parser) {
  std::array<char, 4096> bytes;
  std::string text;
  error_code ec;
  while (!parser.is_done() && text.size() < kErrorBodyBytes) {
    parser.get().body().data = bytes.data();
    parser.get().body().size = bytes.size();
    co_await http::async_read_some(*lease_.stream, buffer_, parser, net::with_ec(ec));
    if (ec == http::error::need_buffer) ec = {};
    if (ec) break;
    text.append(bytes.data(), bytes.size() - parser.get().body().size);
  }
  for (char& c : text) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  if (text.size() > kErrorBodyBytes) text.resize(kErrorBodyBytes);
  fail(ErrorCause::kHttpStatus, "HTTP " + std::to_string(result_.http_status) + ": " + text);
  release(!ec && parser.is_done() && parser.keep_alive());
}

}  // namespace servesim
