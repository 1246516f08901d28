#include "serve/loadtest/sse_decoder.h"

#include <gtest/gtest.h>

namespace servesim {
namespace {

TEST(SseDecoder, EventsSplitAnywhere) {
  const std::string stream =
      ": comment\ndata: {\"a\":1}\n\nevent: x\ndata: line1\ndata: line2\r\n\r\ndata:[DONE]\r\r";
  // Every split point gives the same events.
  for (size_t cut = 0; cut <= stream.size(); ++cut) {
    SseDecoder d;
    std::vector<std::string> events;
    ASSERT_TRUE(d.feed(std::string_view(stream).substr(0, cut), events));
    ASSERT_TRUE(d.feed(std::string_view(stream).substr(cut), events));
    ASSERT_EQ(events.size(), 3u) << cut;
    EXPECT_EQ(events[0], "{\"a\":1}");
    EXPECT_EQ(events[1], "line1\nline2");
    EXPECT_EQ(events[2], "[DONE]");
    EXPECT_FALSE(d.has_partial_event());
  }
}

TEST(SseDecoder, PartialEventAndOverlongLine) {
  SseDecoder d;
  std::vector<std::string> events;
  EXPECT_TRUE(d.feed("data: x\n", events));
  EXPECT_TRUE(events.empty());
  EXPECT_TRUE(d.has_partial_event());
  SseDecoder long_line;
  EXPECT_FALSE(long_line.feed(std::string(SseDecoder::kMaxLineBytes + 1, 'x'), events));
  EXPECT_FALSE(long_line.error().empty());
  EXPECT_FALSE(long_line.feed("\n", events));
}

}  // namespace
}  // namespace servesim
