// SentencePieceTokenizer: a model's own tokenizer for `servesim engine serve --tokenizer`, read
// from its SentencePiece `tokenizer.model` with Debian's libsentencepiece: the tokenizer of
// Llama 1 and 2, CodeLlama, Mistral 7B v0.1, Mixtral, TinyLlama and Gemma. Prompts are encoded
// as vLLM's completions endpoint does with add_special_tokens (the model's BOS first); output
// streams back as vLLM's incremental detokenizer does (vllm/transformers_utils/detokenizer_utils
// of 0.11: each step decodes a short window and emits what it adds, holding text that ends in
// an incomplete character).
//
// Hugging Face `tokenizer.json` files (Llama 3, Qwen, SmolLM2, DeepSeek) need the `tokenizers`
// library, which Debian does not package: such a path is refused with the alternatives.
//
// Immutable after load(); const methods are thread-safe (libsentencepiece's Encode and Decode
// are const). Each SentencePieceDetokenizer borrows its tokenizer, which must outlive it.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "serve/server/tokenizer.h"

namespace sentencepiece {
class SentencePieceProcessor;
}

namespace servesim {

class SentencePieceTokenizer : public Tokenizer {
 public:
  // Loads `path`: a SentencePiece model file, or a directory holding `tokenizer.model` (a
  // Hugging Face model folder). Throws ConfigError naming --tokenizer and the fix when the path
  // does not exist, holds only a tokenizer.json, is not a SentencePiece model, has no EOS
  // piece, or has more pieces than the model's `model_vocab_size` (its ids would index past
  // the embedding).
  static std::shared_ptr<const SentencePieceTokenizer> load(const std::string& path,
                                                            int model_vocab_size);
  ~SentencePieceTokenizer() override;

  std::string name() const override { return "sentencepiece"; }
  std::string description() const override;  // "sentencepiece (FILE, N pieces)"
  int32_t eos_token_id() const override { return eos_id_; }
  Encoded encode(std::string_view text) const override;
  std::unique_ptr<Detokenizer> detokenizer(std::span<const int32_t> prompt) const override;

  const std::string& file() const { return file_; }  // the tokenizer.model read
  int num_pieces() const { return num_pieces_; }
  int32_t bos_token_id() const { return bos_id_; }  // -1: the model has none

  // The text of `ids` decoded together (no streaming): SentencePiece's own Decode, with ids
  // outside the pieces left out. Used by the detokenizer on its window.
  std::string decode_window(std::span<const int32_t> ids) const;

 private:
  SentencePieceTokenizer() = default;

  std::unique_ptr<sentencepiece::SentencePieceProcessor> processor_;
  std::string file_;
  int num_pieces_ = 0;
  int32_t bos_id_ = -1;
  int32_t eos_id_ = -1;
};

// One request's output as text, as vLLM's detokenize_incrementally: the window runs from
// prefix_ to the end, read_ marks what was emitted; a token is emitted when decoding the window
// gives more text than its first part did and the text does not end in U+FFFD (a byte-fallback
// character still incomplete). The window starts on the prompt's last 5 tokens, so the first
// output word keeps its leading space. A token outside the pieces (a random-weight model may
// sample any id of its vocabulary) streams as the placeholder "<|tok_N|>".
class SentencePieceDetokenizer : public Detokenizer {
 public:
  SentencePieceDetokenizer(const SentencePieceTokenizer& tokenizer,
                           std::span<const int32_t> prompt);
  std::string push(int32_t token) override;
  std::string flush() override;

 private:
  // The text the window adds past read_ (empty while it ends in U+FFFD, unless `final`).
  std::string settle(bool final);

  const SentencePieceTokenizer& tokenizer_;
  std::vector<int32_t> ids_;  // prompt tail, then outputs since the last placeholder
  size_t prefix_ = 0;         // window start (into ids_)
  size_t read_ = 0;           // ids_ before read_ have been emitted
};

}  // namespace servesim
