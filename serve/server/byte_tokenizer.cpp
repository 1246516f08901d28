#include "serve/server/byte_tokenizer.h"

#include <cstdio>

namespace servesim {
namespace {

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD

bool is_continuation(uint8_t b) {
  return (b & 0xC0) == 0x80;
}

// The length of the character a lead byte starts (0: not a lead byte, or one that could only
// start an overlong or out-of-range character).
int sequence_length(uint8_t lead) {
  if (lead < 0x80) return 1;
  if (lead >= 0xC2 && lead <= 0xDF) return 2;
  if (lead >= 0xE0 && lead <= 0xEF) return 3;
  if (lead >= 0xF0 && lead <= 0xF4) return 4;
  return 0;
}

// Whether `second` may follow `lead`: the ranges that exclude overlong forms, surrogates and
// code points above U+10FFFF (RFC 3629, section 4).
bool valid_second(uint8_t lead, uint8_t second) {
  if (!is_continuation(second)) return false;
  if (lead == 0xE0) return second >= 0xA0;
  if (lead == 0xED) return second <= 0x9F;
  if (lead == 0xF0) return second >= 0x90;
  if (lead == 0xF4) return second <= 0x8F;
  return true;
}

}  // namespace

Tokenizer::Encoded ByteTokenizer::encode(std::string_view text) const {
  Encoded e;
  e.tokens.reserve(text.size());
  for (char c : text) {
    const auto byte = static_cast<uint8_t>(c);
    const int32_t token = kFirstByteToken + byte;
    if (token >= vocab_size_) {
      char hex[8];
      std::snprintf(hex, sizeof hex, "0x%02X", byte);
      e.tokens.clear();
      e.error = std::string("byte ") + hex + " has no token in this model's vocabulary of " +
                std::to_string(vocab_size_) + " (the " + std::string(kName) + " tokenizer needs " +
                std::to_string(kFullVocabSize) + " tokens for every byte)";
      return e;
    }
    e.tokens.push_back(token);
  }
  return e;
}

std::unique_ptr<Detokenizer> ByteTokenizer::detokenizer(std::span<const int32_t>) const {
  return std::make_unique<ByteDetokenizer>();
}

std::string ByteDetokenizer::push(int32_t token) {
  std::string out;
  if (token >= ByteTokenizer::kFirstByteToken &&
      token < ByteTokenizer::kFirstByteToken + ByteTokenizer::kNumByteTokens) {
    pending_.push_back(static_cast<char>(token - ByteTokenizer::kFirstByteToken));
    drain(out);
    return out;
  }
  out = flush();
  if (token != ByteTokenizer::kEosTokenId) out += "<|tok_" + std::to_string(token) + "|>";
  return out;
}

std::string ByteDetokenizer::flush() {
  std::string out;
  drain(out);
  if (!pending_.empty()) {
    // An incomplete character that nothing more will complete.
    out += kReplacement;
    pending_.clear();
  }
  return out;
}

// Moves every complete character (or invalid byte, as U+FFFD) from pending_ to `out`, keeping
// the prefix of a character that later bytes may still complete.
void ByteDetokenizer::drain(std::string& out) {
  size_t i = 0;
  while (i < pending_.size()) {
    const auto lead = static_cast<uint8_t>(pending_[i]);
    const int len = sequence_length(lead);
    if (len == 0) {
      out += kReplacement;
      ++i;
      continue;
    }
    size_t have = 1;
    bool broken = false;
    while (have < static_cast<size_t>(len) && i + have < pending_.size()) {
      const auto b = static_cast<uint8_t>(pending_[i + have]);
      if (have == 1 ? !valid_second(lead, b) : !is_continuation(b)) {
        broken = true;
        break;
      }
      ++have;
    }
    if (broken) {
      // The bytes so far start no character: one U+FFFD for them, resume at the breaking byte.
      out += kReplacement;
      i += have;
      continue;
    }
    if (have < static_cast<size_t>(len)) break;  // incomplete: wait for more bytes
    out.append(pending_, i, len);
    i += len;
  }
  pending_.erase(0, i);
}

}  // namespace servesim
