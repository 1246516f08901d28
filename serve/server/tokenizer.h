// Tokenizer: the text seam of `servesim engine serve` — text prompts to token ids, and a
// request's output ids back to text as they stream. Two implementations: ByteTokenizer (one
// token per UTF-8 byte, for models that ship no tokenizer) and SentencePieceTokenizer (a
// model's own tokenizer.model, through Debian's libsentencepiece).
//
// A Tokenizer is immutable after construction and shared by every connection (const methods
// are thread-safe); a Detokenizer belongs to one request and is not thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace servesim {

// Streams one request's output as text. Every piece it returns is valid UTF-8: text a later
// token may still change (an incomplete character) is held until it is settled.
class Detokenizer {
 public:
  virtual ~Detokenizer() = default;
  // The text `token` adds to the output: "" while it is not settled yet, or for EOS.
  virtual std::string push(int32_t token) = 0;
  // Whatever is still held at the end of the output (an incomplete character: U+FFFD).
  virtual std::string flush() = 0;
};

class Tokenizer {
 public:
  virtual ~Tokenizer() = default;

  // What /v1/models and the start-up line call it ("servesim-byte", "sentencepiece").
  virtual std::string name() const = 0;
  // The name and where it came from, for the start-up line.
  virtual std::string description() const { return name(); }
  // The token that ends a sequence: a stop token unless the request sets ignore_eos.
  virtual int32_t eos_token_id() const = 0;

  // The tokens of a prompt's text, as vLLM's completions endpoint makes them (special tokens
  // added: a SentencePiece model's BOS first), or, when the text cannot be encoded for this
  // model, an `error` saying why (the tokens are then empty).
  struct Encoded {
    std::vector<int32_t> tokens;
    std::string error;
  };
  virtual Encoded encode(std::string_view text) const = 0;

  // A detokenizer for the output that follows `prompt` (the prompt's last tokens decide, e.g.,
  // whether the first output word starts with a space).
  virtual std::unique_ptr<Detokenizer> detokenizer(std::span<const int32_t> prompt) const = 0;

  // The text of a whole output, as a detokenizer after `prompt` would stream it.
  std::string decode(std::span<const int32_t> prompt, std::span<const int32_t> output) const;
};

}  // namespace servesim
