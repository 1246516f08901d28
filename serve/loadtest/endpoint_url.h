// EndpointUrl: the one server a load test may talk to, parsed from the URL the user gives
// (`http://host:port[/prefix]`). Only plain http:// is accepted — the load generator opens
// connections to this host and port and to nothing else — and every request path is built
// by target(), so no request can leave for another address. A plain value; thread-safe.
#pragma once

#include <string>
#include <string_view>

namespace servesim {

struct EndpointUrl {
  std::string text;         // the URL as given, for reports
  std::string host;         // name or address, without IPv6 brackets
  std::string port = "80";  // decimal
  std::string prefix;       // path before /v1/..., without a trailing '/'; often empty

  // Throws ConfigError naming the URL for anything but http://host[:port][/prefix] (https,
  // user info, a query, a bad port, brackets around anything but an IPv6 address) and for a
  // blank or control character anywhere (named by position, not printed).
  static EndpointUrl parse(const std::string& url);

  // The request target for an API path such as "/v1/completions".
  std::string target(std::string_view path) const { return prefix + std::string(path); }
  // The Host header value.
  std::string host_header() const;
};

}  // namespace servesim
