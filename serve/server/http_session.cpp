#include "serve/server/http_session.h"

#include <sys/socket.h>

#include <boost/asio/post.hpp>
#include <boost/asio/write.hpp>
#include <cerrno>
#include <cstdio>
#include <ctime>

namespace servesim {
namespace {

namespace beast = boost::beast;
namespace http = boost::beast::http;
namespace net = boost::asio;
using json = nlohmann::ordered_json;

constexpr auto kLingerTimeout = std::chrono::seconds(2);

std::chrono::steady_clock::duration duration_of(double seconds) {
  return std::chrono::duration_cast<std::chrono::steady_clock::duration>(
      std::chrono::duration<double>(seconds));
}

// The route of a target, without its query string.
std::string_view path_of(std::string_view target) {
  return target.substr(0, target.find('?'));
}

ChoiceEnd choice_end(const FinishedRequest& f, int32_t last_token, int32_t eos_token_id) {
  ChoiceEnd end;
  end.finish_reason = std::string(finish_reason_name(f.finish_reason));
  // vLLM: the stop token that ended the request, null for EOS.
  if (f.finish_reason == FinishReason::kStop && last_token != eos_token_id) {
    end.stop_reason = last_token;
  }
  return end;
}

}  // namespace

void ServeContext::warn_ignored(const std::vector<std::string>& fields) {
  const std::lock_guard lock(warned_mu_);
  for (const std::string& f : fields) {
    if (warned_.size() >= kMaxWarnedFields || !warned_.insert(f).second) continue;
    std::string shown = f.substr(0, kMaxShownNameBytes);
    for (char& c : shown) {
      if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
    }
    if (f.size() > kMaxShownNameBytes) shown += "...";
    std::fprintf(stderr,
                 "servesim engine serve: warning: request field '%s' is not supported and is "
                 "ignored (reported once)\n",
                 shown.c_str());
    if (warned_.size() == kMaxWarnedFields) {
      std::fprintf(stderr,
                   "servesim engine serve: warning: %zu unsupported request fields reported; "
                   "further ones are ignored without a report\n",
                   kMaxWarnedFields);
    }
  }
}

HttpSession::HttpSession(net::ip::tcp::socket&& socket, ServeContext& context)
    : stream_(std::move(socket)), ctx_(context) {
  ++ctx_.connections;
}

HttpSession::~HttpSession() {
  --ctx_.connections;
}

void HttpSession::start() {
  net::dispatch(stream_.get_executor(), [self = shared_from_this()] { self->do_read(); });
}

void HttpSession::start_rejected() {
  net::dispatch(stream_.get_executor(), [self = shared_from_this()] {
    self->keep_alive_ = false;
    self->send_error(
        ApiError(503, "too many connections (--max-connections " +
                          std::to_string(self->ctx_.options.max_connections) + "); retry later"),
        /*close_after=*/true);
  });
}

void HttpSession::do_read() {
  if (closed_) return;
  head_request_ = false;
  parser_.emplace();
  parser_->body_limit(static_cast<uint64_t>(ctx_.options.max_body_bytes));
  parser_->header_limit(kHeaderLimitBytes);
  stream_.expires_after(duration_of(ctx_.options.keep_alive_timeout_s));
  http::async_read_header(
      stream_, buffer_, *parser_,
      [self = shared_from_this()](beast::error_code ec, size_t) { self->on_header(ec); });
}

// curl sends "Expect: 100-continue" before a body over 1 KiB and waits a second for the go-ahead;
// it gets it at once (or the error, when the header already says the body is too large).
void HttpSession::on_header(beast::error_code ec) {
  if (ec) return on_read(ec);
  head_request_ = parser_->get().method() == http::verb::head;
  auto read_body = [self = shared_from_this()] {
    self->stream_.expires_after(duration_of(self->ctx_.options.write_timeout_s));
    http::async_read(self->stream_, self->buffer_, *self->parser_,
                     [self](beast::error_code read_ec, size_t) { self->on_read(read_ec); });
  };
  if (!beast::iequals(parser_->get()[http::field::expect], "100-continue")) return read_body();
  continue_ = std::make_shared<http::response<http::empty_body>>(http::status::continue_,
                                                                 parser_->get().version());
  http::async_write(stream_, *continue_,
                    [self = shared_from_this(), read_body](beast::error_code write_ec, size_t) {
                      self->continue_.reset();
                      if (write_ec) return self->close();
                      read_body();
                    });
}

void HttpSession::on_read(beast::error_code ec) {
  if (ec == http::error::body_limit) {
    keep_alive_ = false;
    send_error(ApiError(413, "request body larger than --max-request-body-bytes " +
                                 std::to_string(ctx_.options.max_body_bytes)),
               true);
    return;
  }
  if (ec == http::error::header_limit) {
    keep_alive_ = false;
    send_error(
        ApiError(431, "request header larger than " + std::to_string(kHeaderLimitBytes) + " bytes"),
        true);
    return;
  }
  if (ec && ec.category() == http::make_error_code(http::error::bad_method).category() &&
      ec != http::error::end_of_stream && ec != http::error::partial_message) {
    keep_alive_ = false;
    send_error(ApiError(400, std::string("malformed HTTP request: ") + ec.message()), true);
    return;
  }
  if (ec) {
    close();  // the client left, timed out, or the server is stopping
    return;
  }
  request_read_ = Clock::now();
  const HttpRequest req = parser_->release();
  keep_alive_ = req.keep_alive();
  http_version_ = req.version();
  route(req);
}

void HttpSession::route(const HttpRequest& req) {
  const beast::string_view target = req.target();
  const std::string_view path = path_of(std::string_view(target.data(), target.size()));
  struct Route {
    std::string_view path;
    http::verb method;
  };
  static constexpr Route kRoutes[] = {
      {"/v1/completions", http::verb::post}, {"/v1/chat/completions", http::verb::post},
      {"/v1/models", http::verb::get},       {"/health", http::verb::get},
      {"/version", http::verb::get},         {"/metrics", http::verb::get}};
  const Route* route = nullptr;
  for (const Route& r : kRoutes) {
    if (r.path == path) route = &r;
  }
  // FastAPI's bodies, as vLLM answers an unknown route or a wrong method. As Starlette's
  // routes do, a GET route answers HEAD too, with the GET's header and no body (send()).
  if (route == nullptr) return send_json(404, {{"detail", "Not Found"}});
  const bool head_of_get = head_request_ && route->method == http::verb::get;
  if (req.method() != route->method && !head_of_get) {
    HttpResponse res{http::status::method_not_allowed, http_version_};
    res.set(http::field::allow, http::to_string(route->method));
    res.set(http::field::content_type, "application/json");
    res.body() = json{{"detail", "Method Not Allowed"}}.dump();
    return send(std::move(res), false);
  }
  if (path == "/v1/completions") return handle_generation(req, Endpoint::kCompletions);
  if (path == "/v1/chat/completions") return handle_generation(req, Endpoint::kChatCompletions);
  if (path == "/v1/models") {
    return send_json(200, models_json(ctx_.options.served_model_name, ctx_.options.model_root,
                                      ctx_.max_model_len, ctx_.created, ctx_.tokenizer->name()));
  }
  if (path == "/version") return send_json(200, {{"version", ctx_.options.version}});
  HttpResponse res{http::status::ok, http_version_};
  if (path == "/metrics") {
    res.set(http::field::content_type, "text/plain; version=0.0.4; charset=utf-8");
    res.body() = ctx_.metrics->render();
  }
  send(std::move(res), false);  // /health: 200, empty
}

void HttpSession::handle_generation(const HttpRequest& req, Endpoint endpoint) {
  try {
    GenerationRequest r =
        parse_generation_request(endpoint, req.body(), *ctx_.tokenizer, ctx_.vocab_size);
    if (!r.model.empty() && r.model != ctx_.options.served_model_name) {
      throw ApiError(404, "The model `" + r.model + "` does not exist.", "model");
    }
    const int max_tokens = resolve_max_tokens(r, ctx_.max_model_len);
    ctx_.warn_ignored(r.ignored_fields);
    start_generation(std::move(r), max_tokens);
  } catch (const ApiError& e) {
    send_error(e);
  }
}

void HttpSession::start_generation(GenerationRequest r, int max_tokens) {
  EngineWorker& worker = *ctx_.worker;
  const uint64_t id = worker.next_id();
  gen_ = Generation{};
  gen_.id = id;
  gen_.active = true;
  gen_.stream = r.stream;
  gen_.include_usage = r.include_usage;
  gen_.continuous_usage = r.continuous_usage_stats;
  gen_.header =
      ResponseHeader{r.endpoint, response_id(r.endpoint, id),
                     static_cast<int64_t>(std::time(nullptr)), ctx_.options.served_model_name};
  gen_.prompt_tokens = static_cast<int>(r.prompt_token_ids.size());
  gen_.detokenizer = ctx_.tokenizer->detokenizer(r.prompt_token_ids);

  GenerationJob job;
  job.request.id = id;
  job.request.prompt_token_ids = std::move(r.prompt_token_ids);
  job.request.max_output_tokens = max_tokens;
  // vLLM: ignore_eos drops EOS only; stop_token_ids stop either way.
  if (!r.ignore_eos) job.request.stop_token_ids.push_back(ctx_.tokenizer->eos_token_id());
  job.request.stop_token_ids.insert(job.request.stop_token_ids.end(), r.stop_token_ids.begin(),
                                    r.stop_token_ids.end());
  job.request.arrival_s = static_cast<double>(id);  // orders requests; never a clock
  job.sampling = r.sampling;
  job.min_tokens = r.min_tokens;
  job.arrival = request_read_;
  job.on_output = [self = shared_from_this(), executor = stream_.get_executor(),
                   id](const JobOutput& out) {
    net::post(executor, [self, id, out] { self->on_output(id, out); });
  };
  worker.submit(std::move(job));
  watch_disconnect();
}

void HttpSession::on_output(uint64_t id, const JobOutput& out) {
  if (closed_ || !gen_.active || id != gen_.id) return;
  const FinishedRequest* f = out.finished ? &*out.finished : nullptr;
  if (f != nullptr && f->status == RequestStatus::kRejected) {
    gen_.active = false;
    return send_error(ApiError(400, f->reason));
  }
  std::string piece;
  if (out.token) {
    ++gen_.num_tokens;
    gen_.last_token = *out.token;
    // vLLM leaves the stop token's own text out of the output.
    const bool stopped = f != nullptr && f->finish_reason == FinishReason::kStop;
    piece = stopped ? gen_.detokenizer->flush() : gen_.detokenizer->push(*out.token);
  }
  if (f != nullptr) piece += gen_.detokenizer->flush();
  const Usage usage{gen_.prompt_tokens, gen_.num_tokens};
  std::optional<ChoiceEnd> end;
  if (f != nullptr) end = choice_end(*f, gen_.last_token, ctx_.tokenizer->eos_token_id());
  if (!gen_.stream) {
    gen_.text += piece;
    if (f == nullptr) return;
    gen_.active = false;
    return send_json(200, response_json(gen_.header, gen_.text, *end, usage));
  }
  const std::optional<Usage> running =
      gen_.continuous_usage ? std::optional<Usage>(usage) : std::nullopt;
  if (gen_.header.endpoint == Endpoint::kChatCompletions && !gen_.role_sent) {
    gen_.role_sent = true;
    emit(chunk_json(gen_.header, "", std::nullopt, true, running));
  }
  emit(chunk_json(gen_.header, piece, end, false, running));
  if (f != nullptr) {
    if (gen_.include_usage) emit(usage_chunk_json(gen_.header, usage));
    end_stream();
  }
}

void HttpSession::emit(const json& chunk) {
  if (closed_) return;
  pending_ += "data: ";
  pending_ += chunk.dump();
  pending_ += "\n\n";
  const int64_t queued = static_cast<int64_t>(pending_.size() + writing_.size());
  if (queued > ctx_.options.max_stream_buffer_bytes) {
    // The client stopped reading: end its request rather than buffer without bound.
    ++ctx_.slow_aborts;
    std::fprintf(stderr,
                 "servesim engine serve: %s: client is not reading (%lld bytes queued); "
                 "request aborted\n",
                 gen_.header.id.c_str(), static_cast<long long>(queued));
    cancel_generation();
    close();
    return;
  }
  flush();
}

void HttpSession::end_stream() {
  gen_.active = false;
  gen_.done = true;
  pending_ += "data: [DONE]\n\n";
  flush();
}

// Starts the next write of the stream: its head, the queued events as one chunk, or the last
// chunk; when everything is out, the next request.
void HttpSession::flush() {
  if (write_busy_ || closed_) return;
  auto done = [self = shared_from_this()](beast::error_code ec, size_t) { self->on_written(ec); };
  stream_.expires_after(duration_of(ctx_.options.write_timeout_s));
  if (!gen_.head_sent) {
    gen_.head_sent = true;
    stream_head_ = {};
    stream_head_.version(http_version_);
    stream_head_.result(http::status::ok);
    stream_head_.set(http::field::content_type, "text/event-stream; charset=utf-8");
    stream_head_.set(http::field::cache_control, "no-cache");
    stream_head_.keep_alive(keep_alive_);
    stream_head_.chunked(true);
    stream_serializer_.emplace(stream_head_);
    write_busy_ = true;
    http::async_write_header(stream_, *stream_serializer_, done);
    return;
  }
  if (!pending_.empty()) {
    writing_.swap(pending_);
    pending_.clear();
    write_busy_ = true;
    net::async_write(stream_, http::make_chunk(net::buffer(writing_)), done);
    return;
  }
  if (gen_.done && !gen_.last_chunk_sent) {
    gen_.last_chunk_sent = true;
    write_busy_ = true;
    net::async_write(stream_, http::make_chunk_last(), done);
    return;
  }
  if (gen_.done) {
    gen_ = Generation{};
    if (keep_alive_) return do_read();
    close();
  }
}

void HttpSession::on_written(beast::error_code ec) {
  write_busy_ = false;
  writing_.clear();
  if (ec) {
    cancel_generation();
    close();
    return;
  }
  flush();
}

// The client may close its connection while its request runs: the socket turns readable and a
// peek reads end-of-file (or fails: a reset). Bytes to read instead are a pipelined request,
// left for after this one. A readiness that peeks nothing (EAGAIN) is no disconnect: the watch
// goes on. Asking available() instead took such a readiness for a disconnect and cut a live
// stream (the loopback soak lost about one stream in 14,000 that way).
void HttpSession::watch_disconnect() {
  stream_.socket().async_wait(net::ip::tcp::socket::wait_read,
                              [self = shared_from_this(), id = gen_.id](beast::error_code ec) {
                                self->on_readable(ec, id);
                              });
}

void HttpSession::on_readable(beast::error_code ec, uint64_t id) {
  if (ec || closed_ || !gen_.active || id != gen_.id) return;
  char byte = 0;
  const ssize_t peeked =
      ::recv(stream_.socket().native_handle(), &byte, 1, MSG_PEEK | MSG_DONTWAIT);
  if (peeked > 0) return;
  if (peeked < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
    watch_disconnect();
    return;
  }
  cancel_generation();
  close();
}

void HttpSession::cancel_generation() {
  if (!gen_.active) return;
  gen_.active = false;
  ctx_.worker->cancel(gen_.id);
}

void HttpSession::send(HttpResponse res, bool close_after) {
  if (closed_) return;
  res.version(http_version_);
  res.keep_alive(keep_alive_ && !close_after);
  res.prepare_payload();
  // A HEAD's answer says what the body would be (its Content-Length) and sends none: bytes
  // after the header would be read as the start of the next response on this connection.
  if (head_request_) res.body().clear();
  response_ = std::make_shared<HttpResponse>(std::move(res));
  stream_.expires_after(duration_of(ctx_.options.write_timeout_s));
  http::async_write(stream_, *response_,
                    [self = shared_from_this(), close_after](beast::error_code ec, size_t) {
                      self->response_.reset();
                      if (ec) return self->close();
                      if (close_after) return self->linger_close();
                      if (!self->keep_alive_) return self->close();
                      self->do_read();
                    });
}

void HttpSession::send_json(int status, const json& body, bool close_after) {
  HttpResponse res{static_cast<http::status>(status), http_version_};
  res.set(http::field::content_type, "application/json");
  res.body() = body.dump();
  send(std::move(res), close_after);
}

void HttpSession::send_error(const ApiError& error, bool close_after) {
  send_json(error.status(), error_json(error), close_after);
}

void HttpSession::close() {
  if (closed_) return;
  closed_ = true;
  cancel_generation();
  beast::error_code ec;
  stream_.socket().shutdown(net::ip::tcp::socket::shutdown_both, ec);
  stream_.close();
}

// Closing at once with unread request bytes would reset the connection and could destroy the
// answer before the client reads it; so stop sending and read until the client closes.
void HttpSession::linger_close() {
  beast::error_code ec;
  stream_.socket().shutdown(net::ip::tcp::socket::shutdown_send, ec);
  stream_.expires_after(kLingerTimeout);
  stream_.async_read_some(net::buffer(drain_),
                          [self = shared_from_this()](beast::error_code read_ec, size_t) {
                            if (read_ec) return self->close();
                            self->linger_close();
                          });
}

}  // namespace servesim
