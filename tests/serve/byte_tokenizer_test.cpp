#include "serve/server/byte_tokenizer.h"

#include <gtest/gtest.h>

namespace servesim {
namespace {

std::vector<int32_t> bytes_of(std::string_view s) {
  std::vector<int32_t> t;
  for (char c : s) t.push_back(ByteTokenizer::kFirstByteToken + static_cast<uint8_t>(c));
  return t;
}

TEST(ByteTokenizer, EncodesEachByteAsOnePlusItsValue) {
  const ByteTokenizer tok(320);
  const ByteTokenizer::Encoded e = tok.encode("Hi \xC3\xA9");  // "Hi é"
  EXPECT_TRUE(e.error.empty());
  EXPECT_EQ(e.tokens, (std::vector<int32_t>{73, 106, 33, 196, 170}));
}

TEST(ByteTokenizer, NamesTheFirstByteAVocabularyCannotHold) {
  const ByteTokenizer tok(64);  // tokens 1..63: bytes 0x00..0x3E
  EXPECT_TRUE(tok.encode("0123").error.empty());
  const ByteTokenizer::Encoded e = tok.encode("12A");
  EXPECT_EQ(e.error,
            "byte 0x41 has no token in this model's vocabulary of 64 (the servesim-byte tokenizer "
            "needs 257 tokens for every byte)");
  EXPECT_TRUE(e.tokens.empty());
}

TEST(ByteTokenizer, DecodeInvertsEncodeAndDropsEos) {
  const ByteTokenizer tok(320);
  const std::string text = "na\xC3\xAFve \xE2\x82\xAC \xF0\x9F\x98\x80!";
  std::vector<int32_t> tokens = tok.encode(text).tokens;
  tokens.push_back(ByteTokenizer::kEosTokenId);
  EXPECT_EQ(tok.decode({}, tokens), text);
}

TEST(ByteDetokenizer, HoldsASplitCharacterUntilItIsComplete) {
  ByteDetokenizer d;
  const std::vector<int32_t> euro = bytes_of("\xE2\x82\xAC");
  EXPECT_EQ(d.push(euro[0]), "");
  EXPECT_EQ(d.push(euro[1]), "");
  EXPECT_EQ(d.push(euro[2]), "\xE2\x82\xAC");
  EXPECT_EQ(d.flush(), "");
}

TEST(ByteDetokenizer, InvalidBytesBecomeReplacementCharacters) {
  ByteDetokenizer d;
  const std::string fffd = "\xEF\xBF\xBD";
  EXPECT_EQ(d.push(bytes_of("\x80")[0]), fffd);  // a lone continuation byte
  EXPECT_EQ(d.push(bytes_of("\xC0")[0]), fffd);  // never a lead byte (overlong)
  EXPECT_EQ(d.push(bytes_of("\xE2")[0]), "");
  EXPECT_EQ(d.push(bytes_of("A")[0]), fffd + "A");  // a broken sequence, then the ASCII byte
  EXPECT_EQ(d.push(bytes_of("\xED")[0]), "");
  EXPECT_EQ(d.push(bytes_of("\xA0")[0]), fffd + fffd);  // a surrogate is not UTF-8
  EXPECT_EQ(d.push(bytes_of("\xF0")[0]), "");
  EXPECT_EQ(d.flush(), fffd);  // incomplete at the end
}

TEST(ByteDetokenizer, TokensBeyondTheBytesArePlaceholders) {
  ByteDetokenizer d;
  EXPECT_EQ(d.push(300), "<|tok_300|>");
  EXPECT_EQ(d.push(bytes_of("\xC3")[0]), "");
  EXPECT_EQ(d.push(257), "\xEF\xBF\xBD<|tok_257|>");  // the pending byte is flushed first
  EXPECT_EQ(d.push(ByteTokenizer::kEosTokenId), "");
}

}  // namespace
}  // namespace servesim
