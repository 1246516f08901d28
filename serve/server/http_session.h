// HttpSession: one client connection of the OpenAI-compatible server (Boost.Beast HTTP/1.1 over
// TCP, keep-alive). It reads a request (the body bounded by max_body_bytes), routes it, and
// either answers at once or hands a generation job to the EngineWorker; the job's outputs are
// posted back onto this connection's strand and written as one server-sent event per token
// (stream: true, chunked transfer encoding) or as one JSON body at the end.
//
// While a generation is under way the session watches the socket: a client that closes it gets
// its request cancelled in the engine (its KV blocks freed). A client that stops reading gets
// its output queued up to max_stream_buffer_bytes, then its request is aborted and the
// connection closed; writes the client does not take within write_timeout_s close it too.
//
// Ownership: shared (shared_from_this) by its pending handlers and its job's callback; borrows
// the ServeContext, which outlives every session. Thread-safety: every member function runs on
// the session's strand; the job callback posts to it from the engine thread.
#pragma once

#include <atomic>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/strand.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>

#include "serve/server/engine_worker.h"
#include "serve/server/openai_request.h"
#include "serve/server/openai_response.h"
#include "serve/server/serve_metrics.h"
#include "serve/server/serve_options.h"
#include "serve/server/tokenizer.h"

namespace servesim {

// What every session of one server shares. Thread-safe as documented per member.
struct ServeContext {
  ServeOptions options;  // immutable
  EngineWorker* worker = nullptr;
  ServeMetrics* metrics = nullptr;
  std::shared_ptr<const Tokenizer> tokenizer;  // immutable, shared by every session
  int vocab_size = 0;                          // the model's: token ids lie below it
  int max_model_len = 0;
  int64_t created = 0;                  // server start, seconds since the Unix epoch
  std::atomic<int64_t> connections{0};  // sessions alive
  std::atomic<int64_t> slow_aborts{0};  // streams aborted for a client that stopped reading

  // Logs (to stderr) request fields that are ignored, each name once per server, for the first
  // kMaxWarnedFields names (then one line saying the rest go unreported: clients choose the
  // names, and a set of all of them would grow without bound). Names are cut to
  // kMaxShownNameBytes, control bytes shown as '?'.
  void warn_ignored(const std::vector<std::string>& fields);
  static constexpr size_t kMaxWarnedFields = 64;
  static constexpr size_t kMaxShownNameBytes = 64;

 private:
  std::mutex warned_mu_;
  std::set<std::string> warned_;
};

class HttpSession : public std::enable_shared_from_this<HttpSession> {
 public:
  using Clock = std::chrono::steady_clock;
  // A request whose header is larger gets 431 (uvicorn's h11 default limit is 16 KiB too).
  static constexpr size_t kHeaderLimitBytes = 16 * 1024;

  HttpSession(boost::asio::ip::tcp::socket&& socket, ServeContext& context);
  ~HttpSession();

  void start();           // serve requests until the client leaves
  void start_rejected();  // answer 503 (too many connections) and close

 private:
  using HttpRequest = boost::beast::http::request<boost::beast::http::string_body>;
  using HttpResponse = boost::beast::http::response<boost::beast::http::string_body>;

  // The generation under way (HTTP/1.1 answers requests in order: at most one).
  struct Generation {
    uint64_t id = 0;
    bool active = false;  // its request is in the engine (no end seen, not cancelled)
    bool stream = false;
    bool include_usage = false;
    bool continuous_usage = false;
    bool done = false;  // stream: the last event is queued
    bool head_sent = false;
    bool last_chunk_sent = false;
    bool role_sent = false;  // chat stream: the first chunk (role) is queued
    ResponseHeader header;
    std::unique_ptr<Detokenizer> detokenizer;
    std::string text;  // not streaming: the whole completion
    int prompt_tokens = 0;
    int num_tokens = 0;
    int32_t last_token = -1;
  };

  void do_read();
  void on_header(boost::beast::error_code ec);
  void on_read(boost::beast::error_code ec);
  void route(const HttpRequest& req);
  void handle_generation(const HttpRequest& req, Endpoint endpoint);
  void start_generation(GenerationRequest request, int max_tokens);
  void send(HttpResponse res, bool close_after);
  void send_json(int status, const nlohmann::ordered_json& body, bool close_after = false);
  void send_error(const ApiError& error, bool close_after = false);
  void close();
  void linger_close();  // after an error answer: stop sending, drain what the client still sends

  void on_output(uint64_t id, const JobOutput& output);
  void emit(const nlohmann::ordered_json& chunk);
  void end_stream();
  void flush();
  void on_written(boost::beast::error_code ec);
  void watch_disconnect();
  void on_readable(boost::beast::error_code ec, uint64_t id);
  void cancel_generation();

  boost::beast::tcp_stream stream_;
  boost::beast::flat_buffer buffer_;
  std::optional<boost::beast::http::request_parser<boost::beast::http::string_body>> parser_;
  ServeContext& ctx_;
  std::shared_ptr<HttpResponse> response_;  // the plain response being written
  std::shared_ptr<boost::beast::http::response<boost::beast::http::empty_body>> continue_;
  bool closed_ = false;
  bool keep_alive_ = true;
  unsigned http_version_ = 11;
  bool head_request_ = false;       // the request being answered is a HEAD: its answer has no body
  Clock::time_point request_read_;  // when the request under way was read

  Generation gen_;
  std::string pending_;  // server-sent events not yet handed to a write
  std::string writing_;  // the write under way
  bool write_busy_ = false;
  boost::beast::http::response<boost::beast::http::empty_body> stream_head_;
  std::optional<boost::beast::http::response_serializer<boost::beast::http::empty_body>>
      stream_serializer_;
  char drain_[4096];  // linger_close's discard buffer
};

}  // namespace servesim
