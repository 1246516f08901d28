#include "serve/loadtest/endpoint_url.h"

#include <charconv>
#include <cstdio>

#include "models/config_error.h"

namespace servesim {
namespace {

[[noreturn]] void fail(const std::string& url, const std::string& why) {
  throw ConfigError("URL '" + url + "': " + why);
}

void parse_authority(const std::string& url, std::string_view authority, EndpointUrl& out) {
  if (authority.find('@') != std::string_view::npos) fail(url, "user info is not supported");
  std::string_view port;
  if (authority.starts_with("[")) {
    const size_t close = authority.find(']');
    if (close == std::string_view::npos) fail(url, "unclosed '[' in the IPv6 address");
    out.host = std::string(authority.substr(1, close - 1));
    std::string_view rest = authority.substr(close + 1);
    if (!rest.empty() && !rest.starts_with(":")) fail(url, "expected ':port' after ']'");
    if (!rest.empty()) port = rest.substr(1);
  } else {
    const size_t colon = authority.rfind(':');
    out.host = std::string(authority.substr(0, colon));
    if (colon != std::string_view::npos) port = authority.substr(colon + 1);
  }
  if (out.host.find_first_of("[]") != std::string::npos) {
    fail(url, "'[' and ']' may only enclose an IPv6 address, as in http://[::1]:8000");
  }
  if (out.host.empty()) fail(url, "no host; expected http://host:port");
  if (port.empty()) return;
  int value = 0;
  const auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), value);
  if (ec != std::errc() || end != port.data() + port.size() || value < 1 || value > 65535) {
    fail(url, "port must be a number in [1, 65535]");
  }
  out.port = std::to_string(value);
}

}  // namespace

EndpointUrl EndpointUrl::parse(const std::string& url) {
  constexpr std::string_view kScheme = "http://";
  if (!url.starts_with(kScheme)) {
    fail(url, url.starts_with("https://") ? "https is not supported; use http://host:port"
                                          : "expected http://host:port");
  }
  // Blanks and control characters would end or split the request line and the Host header.
  for (size_t i = 0; i < url.size(); ++i) {
    const auto c = static_cast<unsigned char>(url[i]);
    if (c <= 0x20 || c == 0x7f) {
      char byte[8];
      std::snprintf(byte, sizeof byte, "0x%02x", c);
      throw ConfigError("URL: character " + std::to_string(i + 1) +
                        " is a blank or a control character (" + byte +
                        "); a URL has none (percent-encode it in a path)");
    }
  }
  EndpointUrl out;
  out.text = url;
  const std::string_view rest = std::string_view(url).substr(kScheme.size());
  if (rest.find_first_of("?#") != std::string_view::npos) {
    fail(url, "a query or fragment is not allowed");
  }
  const size_t slash = rest.find('/');
  parse_authority(url, rest.substr(0, slash), out);
  if (slash != std::string_view::npos) {
    std::string_view path = rest.substr(slash);
    while (path.ends_with("/")) path.remove_suffix(1);
    out.prefix = std::string(path);
  }
  return out;
}

std::string EndpointUrl::host_header() const {
  const std::string host_text = host.find(':') != std::string::npos ? "[" + host + "]" : host;
  return port == "80" ? host_text : host_text + ":" + port;
}

}  // namespace servesim
