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
// Immutable (ByteTokenizer) or one per request (ByteDetokenizer), as serve/server/tokenizer.h.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "serve/server/tokenizer.h"

namespace servesim {

class ByteTokenizer : public Tokenizer {
 public:
  static constexpr int32_t kEosTokenId = 0;
  static constexpr int32_t kFirstByteToken = 1;  // byte b is token kFirstByteToken + b
  static constexpr int32_t kNumByteTokens = 256;
  static constexpr int32_t kFullVocabSize = kFirstByteToken + kNumByteTokens;  // 257
  static constexpr std::string_view kName = "servesim-byte";

  // REQUIRES: vocab_size >= 1.
  explicit ByteTokenizer(int vocab_size) : vocab_size_(vocab_size) {}

  int vocab_size() const { return vocab_size_; }
  std::string name() const override { return std::string(kName); }
  int32_t eos_token_id() const override { return kEosTokenId; }

  // The tokens of `text`, or an error naming the first byte whose token lies outside the
  // vocabulary. No BOS: this tokenizer has none.
  Encoded encode(std::string_view text) const override;
  // The prompt does not matter: every token's text is its own.
  std::unique_ptr<Detokenizer> detokenizer(std::span<const int32_t> prompt) const override;

 private:
  int vocab_size_;
};

class ByteDetokenizer : public Detokenizer {
 public:
  // The text that `token` completes: "" while a character is incomplete, or for EOS.
  std::string push(int32_t token) override;
  // The text still held at the end of the sequence (an incomplete character: U+FFFD).
  std::string flush() override;

 private:
  void drain(std::string& out);
  std::string pending_;  // bytes of an incomplete UTF-8 character
};

}  // namespace servesim
