// FakeOpenAiServer: a small, deterministic OpenAI-compatible server for the load generator's
// tests, on 127.0.0.1 at an ephemeral port, in its own thread. POST /v1/completions and
// /v1/chat/completions stream max_tokens chunks (one per token_delay_s) and a usage block, as
// vLLM does; GET /v1/models, /version and /metrics answer like vLLM's. Faults are set per
// completion request, numbered 0, 1, 2, ... in the order the server reads them: an HTTP
// status, a reset after the first chunk, a malformed event, a hang (never answers).
// Test-only. Thread-safety: the counters and last_body() may be read from any thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <thread>

namespace servesim::testing {

struct FakeServerOptions {
  double token_delay_s = 0.001;         // seconds between output chunks
  std::map<uint64_t, int> status;       // request n -> answer this HTTP status instead
  std::set<uint64_t> reset_mid_stream;  // request n: reset the connection after one chunk
  std::set<uint64_t> malformed;         // request n: a non-JSON event after one chunk
  std::set<uint64_t> hang;              // request n: read it, never answer
  bool metrics = true;                  // serve GET /metrics
  bool drop_idle = false;  // close every connection right after a complete keep-alive answer
  bool usage = true;       // send the usage block
  std::string model_id = "fake-model";
  std::string version_body = R"({"version":"fake-1"})";  // what GET /version answers
};

class FakeOpenAiServer {
 public:
  explicit FakeOpenAiServer(FakeServerOptions options = {});
  ~FakeOpenAiServer();
  FakeOpenAiServer(const FakeOpenAiServer&) = delete;
  FakeOpenAiServer& operator=(const FakeOpenAiServer&) = delete;

  int port() const { return port_; }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  uint64_t completions() const { return completions_.load(); }
  uint64_t connections() const { return connections_.load(); }
  uint64_t scrapes() const { return scrapes_.load(); }
  nlohmann::json last_body() const;

 private:
  struct Impl;
  friend struct Impl;

  FakeServerOptions options_;
  std::unique_ptr<Impl> impl_;
  int port_ = 0;
  std::atomic<uint64_t> completions_{0};
  std::atomic<uint64_t> connections_{0};
  std::atomic<uint64_t> scrapes_{0};
  std::atomic<int> active_{0};
  mutable std::mutex mutex_;
  nlohmann::json last_body_;
  std::thread thread_;
};

// A port on 127.0.0.1 where nothing listens (bound, then released).
int unused_port();

}  // namespace servesim::testing
