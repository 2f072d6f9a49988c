// Character-level text data for language models: the vocabulary (the distinct characters, in byte
// order), the text as token ids split into training and validation parts, and random batches of
// (context, next-token) windows drawn from a Philox stream, as nanoGPT's get_batch draws them.
#ifndef LOCKSTEP_CORE_TEXT_H_
#define LOCKSTEP_CORE_TEXT_H_

#include <stdint.h>

#include <string>
#include <vector>

#include "core/tensor.h"

namespace lockstep {

struct CharCorpus {
  std::string vocab;                 // vocab[id] is the character of token id
  std::vector<int64_t> train, val;   // the first train_fraction of the text, then the rest

  int64_t vocab_size() const { return static_cast<int64_t>(vocab.size()); }
  // Token ids of text; throws lockstep::Error naming the first character not in the vocabulary.
  std::vector<int64_t> Encode(const std::string& text) const;
  std::string Decode(const std::vector<int64_t>& ids) const;
};

// Builds the vocabulary from the whole text and splits it at floor(size * train_fraction).
CharCorpus MakeCharCorpus(const std::string& text, double train_fraction = 0.9);

// Reads a whole text file (at most 256 MB).
std::string ReadTextFile(const std::string& path);

// Batch `index` of a stream: for row b, word (index * batch + b) of the Philox stream `stream`
// under `seed` picks the start s = (word * (n - block)) >> 32, and the row is tokens
// [s, s + block) with targets [s + 1, s + block + 1). x and y are int64 [batch, block].
void TextBatch(const std::vector<int64_t>& tokens, int64_t block, int64_t batch, uint64_t seed,
               const std::string& stream, uint64_t index, Tensor* x, Tensor* y);

}  // namespace lockstep

#endif  // LOCKSTEP_CORE_TEXT_H_
