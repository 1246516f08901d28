#include "serve/server/tokenizer.h"

namespace servesim {

std::string Tokenizer::decode(std::span<const int32_t> prompt,
                              std::span<const int32_t> output) const {
  const std::unique_ptr<Detokenizer> d = detokenizer(prompt);
  std::string text;
  for (int32_t t : output) text += d->push(t);
  return text + d->flush();
}

}  // namespace servesim
