// ByteTokenizer: the text tokenizer of `servesim engine serve` for models that ship no tokenizer
// (every catalog model with seeded weights). Text is its UTF-8 bytes, one token per byte:
//
//   token 0            <|eos|>, the end-of-sequence token (a stop token unless ignore_eos)
//   token 1 + b        byte b (0x00..0xFF), so tokens 1..256 are bytes
//   token >= 257       no text: rendered as the placeholder "<|tok_N|>"
//
// A model needs a vocabulary of at least 257 tokens for every byte to have a token; with a
// smaller one only the bytes below vocab_size - 1 encode (token-id prompts work with any
// vocabulary). ByteDetokenizer turns a stream of tokens back into text incrementally: the bytes
// of a character split over several tokens are held until it is complete, and bytes that are
// not valid UTF-8 become U+FFFD, so every piece it returns is valid UTF-8.
//
// Immutable (ByteTokenizer) or one per request (ByteDetokenizer); neither is thread-safe beyond
// const use.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace servesim {

class ByteTokenizer {
 public:
  static constexpr int32_t kEosTokenId = 0;
  static constexpr int32_t kFirstByteToken = 1;  // byte b is token kFirstByteToken + b
  static constexpr int32_t kNumByteTokens = 256;
  static constexpr int32_t kFullVocabSize = kFirstByteToken + kNumByteTokens;  // 257
  static constexpr std::string_view kName = "servesim-byte";

  // REQUIRES: vocab_size >= 1.
  explicit ByteTokenizer(int vocab_size) : vocab_size_(vocab_size) {}

  int vocab_size() const { return vocab_size_; }
  int32_t eos_token_id() const { return kEosTokenId; }

  // The tokens of `text`, or the first byte whose token lies outside the vocabulary.
  struct Encoded {
    std::vector<int32_t> tokens;
    std::optional<uint8_t> unencodable_byte;
  };
  Encoded encode(std::string_view text) const;

  // The text of a whole sequence (EOS renders as nothing), as ByteDetokenizer would stream it.
  std::string decode(const std::vector<int32_t>& tokens) const;

 private:
  int vocab_size_;
};

class ByteDetokenizer {
 public:
  // The text that `token` completes: "" while a character is incomplete, or for EOS.
  std::string push(int32_t token);
  // The text still held at the end of the sequence (an incomplete character: U+FFFD).
  std::string flush();

 private:
  void drain(std::string& out);
  std::string pending_;  // bytes of an incomplete UTF-8 character
};

}  // namespace servesim
