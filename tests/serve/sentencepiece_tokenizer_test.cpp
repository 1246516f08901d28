// SentencePieceTokenizer on a model trained here (libsentencepiece's trainer, BPE with byte
// fallback, 300 pieces), so no tokenizer file is committed: loading and its refusals, BOS,
// round trips, streaming that holds split characters and keeps the first word's space, and the
// server answering text prompts with it.
#include "serve/server/sentencepiece_tokenizer.h"

#include <gtest/gtest.h>
#include <sentencepiece_trainer.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "models/config_error.h"
#include "tests/serve/serve_test_harness.h"

namespace servesim {
namespace {

namespace fs = std::filesystem;

constexpr int kModelVocab = 320;  // serve_model_spec()'s

class SentencePieceTokenizerTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new fs::path(fs::temp_directory_path() / ("servesim_spm_" + std::to_string(::getpid())));
    fs::remove_all(*dir_);
    fs::create_directories(*dir_ / "model");
    const fs::path corpus = *dir_ / "corpus.txt";
    {
      std::ofstream out(corpus);
      const char* lines[] = {
          "Hello world, this is a small corpus for a tokenizer test.",
          "The quick brown fox jumps over the lazy dog.",
          "Servers stream tokens back to their clients one chunk at a time.",
          "A naive cafe serves coffee to the world every morning.",
          "Say hello to the model and it will answer with text.",
      };
      for (int i = 0; i < 40; ++i) {
        for (const char* line : lines) out << line << "\n";
      }
    }
    const fs::path prefix = *dir_ / "model" / "tokenizer";
    const auto status = sentencepiece::SentencePieceTrainer::Train(
        "--input=" + corpus.string() + " --model_prefix=" + prefix.string() +
        " --vocab_size=300 --model_type=bpe --byte_fallback=true --character_coverage=1.0"
        " --unk_id=0 --bos_id=1 --eos_id=2 --pad_id=-1 --minloglevel=2");
    ASSERT_TRUE(status.ok()) << status.error_message();
  }
  static void TearDownTestSuite() {
    fs::remove_all(*dir_);
    delete dir_;
  }
  static std::string model_file() { return (*dir_ / "model" / "tokenizer.model").string(); }
  static std::string model_dir() { return (*dir_ / "model").string(); }

  static std::shared_ptr<const SentencePieceTokenizer> load() {
    return SentencePieceTokenizer::load(model_file(), kModelVocab);
  }
  // The message of the ConfigError loading `path` throws ("" when it loads).
  static std::string refusal(const std::string& path, int vocab = kModelVocab) {
    try {
      SentencePieceTokenizer::load(path, vocab);
    } catch (const ConfigError& e) {
      return e.what();
    }
    return "";
  }

  static fs::path* dir_;
};

fs::path* SentencePieceTokenizerTest::dir_ = nullptr;

bool valid_utf8(const std::string& s) {
  size_t i = 0;
  while (i < s.size()) {
    const auto lead = static_cast<unsigned char>(s[i]);
    const size_t len = lead < 0x80 ? 1 : (lead >> 5) == 6 ? 2 : (lead >> 4) == 14 ? 3 : 4;
    if (i + len > s.size()) return false;
    for (size_t k = 1; k < len; ++k) {
      if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) return false;
    }
    i += len;
  }
  return true;
}

TEST_F(SentencePieceTokenizerTest, LoadsAFileOrAFolderHoldingTokenizerModel) {
  const auto t = load();
  EXPECT_EQ(t->name(), "sentencepiece");
  EXPECT_EQ(t->num_pieces(), 300);
  EXPECT_EQ(t->bos_token_id(), 1);
  EXPECT_EQ(t->eos_token_id(), 2);
  EXPECT_EQ(t->description(), "sentencepiece (" + model_file() + ", 300 pieces)");
  EXPECT_EQ(SentencePieceTokenizer::load(model_dir(), kModelVocab)->file(), model_file());
}

TEST_F(SentencePieceTokenizerTest, EncodesWithBosFirstAndDecodesBack) {
  const auto t = load();
  const std::string text = "Hello world, the cafe answers.";
  const Tokenizer::Encoded e = t->encode(text);
  ASSERT_TRUE(e.error.empty()) << e.error;
  ASSERT_GE(e.tokens.size(), 2u);
  EXPECT_EQ(e.tokens.front(), 1);  // BOS, as vLLM's completions endpoint adds it
  // Pieces, not bytes: the trained merges make it shorter than the text.
  EXPECT_LT(e.tokens.size(), text.size());
  for (int32_t id : e.tokens) EXPECT_LT(id, 300);
  const std::vector<int32_t> body(e.tokens.begin() + 1, e.tokens.end());
  EXPECT_EQ(t->decode({}, body), text);
}

TEST_F(SentencePieceTokenizerTest, StreamingGivesTheWholeTextInValidUtf8Pieces) {
  const auto t = load();
  // é and the emoji are not in the corpus' pieces: byte-fallback tokens, one per UTF-8 byte.
  const std::string text = " hello to the caf\xC3\xA9 \xF0\x9F\x98\x80 world";
  const Tokenizer::Encoded e = t->encode(text);
  ASSERT_TRUE(e.error.empty());
  const std::vector<int32_t> prompt = t->encode("Say").tokens;
  const std::vector<int32_t> output(e.tokens.begin() + 1, e.tokens.end());  // after BOS
  const std::unique_ptr<Detokenizer> d = t->detokenizer(prompt);
  std::string streamed;
  int held = 0;  // pushes that returned nothing: the emoji's first bytes
  for (int32_t id : output) {
    const std::string piece = d->push(id);
    EXPECT_TRUE(valid_utf8(piece)) << "token " << id;
    if (piece.empty()) ++held;
    streamed += piece;
  }
  streamed += d->flush();
  // The first output word keeps its space: the window starts on the prompt's last tokens.
  EXPECT_EQ(streamed, text);
  EXPECT_GE(held, 3);  // 4 bytes of the emoji, 2 of é: all but the last of each are held
}

TEST_F(SentencePieceTokenizerTest, EosAddsNoTextAndIdsBeyondThePiecesArePlaceholders) {
  const auto t = load();
  const std::vector<int32_t> prompt = t->encode("Say").tokens;
  const std::vector<int32_t> encoded = t->encode(" hello").tokens;
  const std::vector<int32_t> hello(encoded.begin() + 1, encoded.end());  // after BOS
  std::vector<int32_t> output = hello;
  output.push_back(310);  // in the model's vocabulary (320), not among the 300 pieces
  output.insert(output.end(), hello.begin(), hello.end());
  output.push_back(t->eos_token_id());
  EXPECT_EQ(t->decode(prompt, output), " hello<|tok_310|> hello");
}

TEST_F(SentencePieceTokenizerTest, RefusesWhatItCannotReadNamingTheFlag) {
  EXPECT_EQ(refusal(model_file(), 256),
            "--tokenizer " + model_file() +
                ": has 300 pieces, more than the model's vocab_size of 256: it is another "
                "model's tokenizer");
  const fs::path missing = *dir_ / "none.model";
  EXPECT_EQ(refusal(missing.string()),
            "--tokenizer " + missing.string() + ": no such file or directory");

  const fs::path hf = *dir_ / "hf";
  fs::create_directories(hf);
  std::ofstream(hf / "tokenizer.json") << "{}";
  EXPECT_NE(refusal(hf.string())
                .find("holds only tokenizer.json, which needs the tokenizers "
                      "library (Debian has none)"),
            std::string::npos)
      << refusal(hf.string());
  EXPECT_NE(refusal((hf / "tokenizer.json").string()).find("Send token-id prompts"),
            std::string::npos);

  const fs::path empty = *dir_ / "empty";
  fs::create_directories(empty);
  EXPECT_EQ(refusal(empty.string()),
            "--tokenizer " + empty.string() + ": no tokenizer.model in this directory");

  const fs::path junk = *dir_ / "junk.model";
  std::ofstream(junk) << "not a protobuf at all";
  EXPECT_NE(refusal(junk.string()).find(": not a SentencePiece model ("), std::string::npos)
      << refusal(junk.string());
}

TEST_F(SentencePieceTokenizerTest, TheServerTokenizesTextPromptsWithIt) {
  const auto t = load();
  const Weights weights = Weights::random(testing::serve_model_spec(), 7);
  auto engine =
      std::make_unique<Engine>(weights, EngineOptions{testing::serve_scheduler_config(), 1, false});
  OpenAiServer server(std::move(engine), testing::serve_test_options(), t);

  const auto models =
      testing::http_call(server.port(), boost::beast::http::verb::get, "/v1/models");
  EXPECT_EQ(models.json()["data"][0]["tokenizer"], "sentencepiece");

  const std::string prompt = "Say hello to the world";
  const nlohmann::json body = {{"model", "tiny-serve"},
                               {"prompt", prompt},
                               {"max_tokens", 12},
                               {"ignore_eos", true},
                               {"temperature", 0}};
  const auto whole = testing::post_json(server.port(), "/v1/completions", body);
  ASSERT_EQ(whole.status, 200) << whole.body;
  const nlohmann::json w = whole.json();
  EXPECT_EQ(w["usage"]["prompt_tokens"], t->encode(prompt).tokens.size());
  EXPECT_EQ(w["usage"]["completion_tokens"], 12);

  nlohmann::json streaming = body;
  streaming["stream"] = true;
  const auto stream = testing::post_json(server.port(), "/v1/completions", streaming);
  ASSERT_EQ(stream.status, 200);
  std::string text;
  for (const std::string& event : testing::sse_events(stream.body)) {
    if (event == "[DONE]") break;
    const nlohmann::json chunk = nlohmann::json::parse(event);
    if (!chunk["choices"].empty()) text += chunk["choices"][0]["text"].get<std::string>();
  }
  // Greedy: the same tokens, streamed piece by piece, spell the same text.
  EXPECT_EQ(text, w["choices"][0]["text"].get<std::string>());
  server.stop();
}

}  // namespace
}  // namespace servesim
