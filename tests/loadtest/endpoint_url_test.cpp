#include "serve/loadtest/endpoint_url.h"

#include <gtest/gtest.h>

#include "models/config_error.h"

namespace servesim {
namespace {

TEST(EndpointUrl, HostPortAndPrefix) {
  const EndpointUrl u = EndpointUrl::parse("http://127.0.0.1:8000");
  EXPECT_EQ(u.host, "127.0.0.1");
  EXPECT_EQ(u.port, "8000");
  EXPECT_EQ(u.target("/v1/completions"), "/v1/completions");
  EXPECT_EQ(u.host_header(), "127.0.0.1:8000");
  const EndpointUrl p = EndpointUrl::parse("http://gateway/llm/");
  EXPECT_EQ(p.port, "80");
  EXPECT_EQ(p.target("/v1/models"), "/llm/v1/models");
  EXPECT_EQ(p.host_header(), "gateway");
  const EndpointUrl v6 = EndpointUrl::parse("http://[::1]:9000");
  EXPECT_EQ(v6.host, "::1");
  EXPECT_EQ(v6.host_header(), "[::1]:9000");
}

TEST(EndpointUrl, RefusesAnythingButPlainHttp) {
  for (const char* bad : {"https://h:1", "ftp://h", "h:8000", "http://", "http://h:0",
                          "http://h:70000", "http://h:80x", "http://u@h:1", "http://h:1/?q=1"}) {
    EXPECT_THROW(EndpointUrl::parse(bad), ConfigError) << bad;
  }
  // Found by fuzz_endpoint_url: NULs, blanks and line breaks went into the host (and so the
  // Host header) or the request target, and brackets into an unbracketed host.
  for (std::string bad : {std::string("http://\0\0%h:", 12), std::string("http://h:1/a b"),
                          std::string("http://h\r\nX: y:1"), std::string("http://a]b:80"),
                          std::string("http://[::[]:9000")}) {
    EXPECT_THROW(EndpointUrl::parse(bad), ConfigError) << bad;
  }
  try {
    EndpointUrl::parse(std::string("http://h:1/a\nb"));
    ADD_FAILURE() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_STREQ(e.what(),
                 "URL: character 13 is a blank or a control character (0x0a); a URL has none "
                 "(percent-encode it in a path)");
  }
  try {
    EndpointUrl::parse("https://h:1");
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("https is not supported"), std::string::npos);
  }
}

}  // namespace
}  // namespace servesim
