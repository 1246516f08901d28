#include "serve/server/sentencepiece_tokenizer.h"

#include <sentencepiece_processor.h>

#include <algorithm>
#include <filesystem>

#include "models/config_error.h"

namespace servesim {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD
// vLLM's INITIAL_INCREMENTAL_DETOKENIZATION_OFFSET: prompt tokens the first window starts on.
constexpr size_t kPromptTail = 5;

[[noreturn]] void refuse(const std::string& path, const std::string& why) {
  throw ConfigError("--tokenizer " + path + ": " + why);
}

// The SentencePiece file `path` names: itself, or a directory's tokenizer.model.
std::string model_file_of(const std::string& path) {
  std::error_code ec;
  const fs::path p(path);
  const std::string hf_only =
      "is a Hugging Face tokenizer.json, which needs the tokenizers library (Debian has none); "
      "servesim reads SentencePiece tokenizer.model files (Llama 2, Mistral, TinyLlama, Gemma). "
      "Send token-id prompts, or leave --tokenizer out for servesim-byte";
  if (fs::is_directory(p, ec)) {
    if (fs::exists(p / "tokenizer.model", ec)) return (p / "tokenizer.model").string();
    if (fs::exists(p / "tokenizer.json", ec))
      refuse(path, "holds only tokenizer.json, which " + hf_only.substr(hf_only.find("needs")));
    refuse(path, "no tokenizer.model in this directory");
  }
  if (!fs::exists(p, ec)) refuse(path, "no such file or directory");
  if (p.filename() == "tokenizer.json") refuse(path, hf_only);
  return path;
}

bool ends_incomplete(std::string_view text) {
  return text.size() >= kReplacement.size() &&
         text.substr(text.size() - kReplacement.size()) == kReplacement;
}

std::string placeholder(int32_t token) {
  return "<|tok_" + std::to_string(token) + "|>";
}

}  // namespace

std::shared_ptr<const SentencePieceTokenizer> SentencePieceTokenizer::load(const std::string& path,
                                                                           int model_vocab_size) {
  std::shared_ptr<SentencePieceTokenizer> t(new SentencePieceTokenizer());
  t->file_ = model_file_of(path);
  t->processor_ = std::make_unique<sentencepiece::SentencePieceProcessor>();
  const sentencepiece::util::Status status = t->processor_->Load(t->file_);
  if (!status.ok()) {
    refuse(path, std::string("not a SentencePiece model (") + status.error_message() + ")");
  }
  t->num_pieces_ = t->processor_->GetPieceSize();
  t->bos_id_ = t->processor_->bos_id();
  t->eos_id_ = t->processor_->eos_id();
  if (t->num_pieces_ > model_vocab_size) {
    refuse(path, "has " + std::to_string(t->num_pieces_) + " pieces, more than the model's " +
                     "vocab_size of " + std::to_string(model_vocab_size) +
                     ": it is another model's tokenizer");
  }
  if (t->eos_id_ < 0) refuse(path, "has no EOS piece, so no request could stop on its own");
  return t;
}

SentencePieceTokenizer::~SentencePieceTokenizer() = default;

std::string SentencePieceTokenizer::description() const {
  return name() + " (" + file_ + ", " + std::to_string(num_pieces_) + " pieces)";
}

Tokenizer::Encoded SentencePieceTokenizer::encode(std::string_view text) const {
  Encoded e;
  std::vector<int> ids;
  const sentencepiece::util::Status status = processor_->Encode(text, &ids);
  if (!status.ok()) {
    e.error = std::string("the SentencePiece tokenizer cannot encode it (") +
              status.error_message() + ")";
    return e;
  }
  e.tokens.reserve(ids.size() + 1);
  if (bos_id_ >= 0) e.tokens.push_back(bos_id_);
  e.tokens.insert(e.tokens.end(), ids.begin(), ids.end());
  return e;
}

std::unique_ptr<Detokenizer> SentencePieceTokenizer::detokenizer(
    std::span<const int32_t> prompt) const {
  return std::make_unique<SentencePieceDetokenizer>(*this, prompt);
}

std::string SentencePieceTokenizer::decode_window(std::span<const int32_t> ids) const {
  std::vector<int> known;
  known.reserve(ids.size());
  for (int32_t id : ids) {
    if (id >= 0 && id < num_pieces_) known.push_back(id);
  }
  std::string text;
  // Decode fails only on ids outside the pieces, which are left out above.
  if (!processor_->Decode(known, &text).ok()) text.clear();
  return text;
}

SentencePieceDetokenizer::SentencePieceDetokenizer(const SentencePieceTokenizer& tokenizer,
                                                   std::span<const int32_t> prompt)
    : tokenizer_(tokenizer) {
  const size_t tail = std::min(prompt.size(), kPromptTail);
  ids_.assign(prompt.end() - static_cast<std::ptrdiff_t>(tail), prompt.end());
  read_ = ids_.size();
}

std::string SentencePieceDetokenizer::settle(bool final) {
  const std::span<const int32_t> ids(ids_);
  const std::string before = tokenizer_.decode_window(ids.subspan(prefix_, read_ - prefix_));
  const std::string after = tokenizer_.decode_window(ids.subspan(prefix_));
  if (after.size() <= before.size() || (!final && ends_incomplete(after))) return "";
  // A window's text only grows at its end: SentencePiece decodes piece by piece, and the
  // leading space it drops is the window's first piece's in both.
  std::string piece = after.substr(before.size());
  prefix_ = read_;
  read_ = ids_.size();
  return piece;
}

std::string SentencePieceDetokenizer::push(int32_t token) {
  if (token < 0 || token >= tokenizer_.num_pieces()) {
    std::string out = flush();
    return out + placeholder(token);
  }
  ids_.push_back(token);
  return settle(false);
}

std::string SentencePieceDetokenizer::flush() {
  std::string out = settle(true);
  // Tokens that added no text (EOS) are read too; the window keeps its start, so the text of
  // what follows still sees the context before it.
  read_ = ids_.size();
  return out;
}

}  // namespace servesim
