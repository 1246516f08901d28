// libFuzzer target: the URL `servesim loadtest` is given (EndpointUrl::parse), the one server a
// load test may talk to. Only ConfigError may escape, and a URL that parses must give a
// request that goes where it says: a host that is a name or an address (no blank, control
// character, '/', '@', '[' or ']'), a port in [1, 65535] written plainly, a prefix that is a
// path (empty or '/' first, not '/' last, no blank, control character, '?' or '#'), so that
// the Host header and the request target carry nothing that would end or split the request.
#include <cstdlib>
#include <string>
#include <string_view>

#include "serve/loadtest/endpoint_url.h"
#include "tests/fuzz/fuzz_input.h"

namespace {

bool plain(std::string_view s, std::string_view also_refused) {
  for (char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (u <= 0x20 || u == 0x7f || also_refused.find(c) != std::string_view::npos) return false;
  }
  return true;
}

void check_invariants(const servesim::EndpointUrl& u) {
  const bool host_ok = !u.host.empty() && plain(u.host, "/@[]");
  int port = 0;
  for (char c : u.port) port = (c >= '0' && c <= '9' && port < 100000) ? port * 10 + (c - '0') : -1;
  const bool port_ok = !u.port.empty() && u.port[0] != '0' && port >= 1 && port <= 65535;
  const bool prefix_ok = u.prefix.empty() || (u.prefix.front() == '/' && u.prefix.back() != '/' &&
                                              plain(u.prefix, "?#"));
  if (!host_ok || !port_ok || !prefix_ok) std::abort();
  if (!plain(u.host_header(), "") || !plain(u.target("/v1/completions"), "")) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string url = servesim::fuzz::as_text(data, size);
  return servesim::fuzz::run_or_reject(
      [&] { check_invariants(servesim::EndpointUrl::parse(url)); });
}
