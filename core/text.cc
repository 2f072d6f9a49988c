#include "core/text.h"

#include <stdio.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "core/error.h"
#include "core/io/files.h"
#include "core/random.h"
#include "core/backend/host.h"

namespace lockstep {

std::vector<int64_t> CharCorpus::Encode(const std::string& text) const {
  int16_t id_of[256];
  std::fill(std::begin(id_of), std::end(id_of), int16_t{-1});
  for (size_t i = 0; i < vocab.size(); ++i) id_of[static_cast<uint8_t>(vocab[i])] = static_cast<int16_t>(i);
  std::vector<int64_t> ids;
  ids.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    const int16_t id = id_of[static_cast<uint8_t>(text[i])];
    if (id < 0) {
      char code[8];
      snprintf(code, sizeof code, "0x%02X", static_cast<unsigned>(static_cast<uint8_t>(text[i])));
      LOCKSTEP_REQUIRE(false, "text: character " << code << " at position " << i << " is not in the vocabulary of "
                                                 << vocab.size() << " characters");
    }
    ids.push_back(id);
  }
  return ids;
}

std::string CharCorpus::Decode(const std::vector<int64_t>& ids) const {
  std::string out;
  out.reserve(ids.size());
  for (int64_t id : ids) {
    LOCKSTEP_REQUIRE(id >= 0 && id < vocab_size(), "text: token " << id << " is not in [0, " << vocab_size() << ")");
    out += vocab[static_cast<size_t>(id)];
  }
  return out;
}

CharCorpus MakeCharCorpus(const std::string& text, double train_fraction) {
  LOCKSTEP_REQUIRE(train_fraction > 0 && train_fraction < 1, "text: train fraction must be in (0, 1)");
  bool seen[256] = {};
  for (char c : text) seen[static_cast<uint8_t>(c)] = true;
  CharCorpus corpus;
  for (int b = 0; b < 256; ++b) {
    if (seen[b]) corpus.vocab += static_cast<char>(b);
  }
  const std::vector<int64_t> ids = corpus.Encode(text);
  // floor(size * fraction): the product is non-negative, so truncation is the floor.
  const size_t split = static_cast<size_t>(static_cast<double>(ids.size()) * train_fraction);
  corpus.train.assign(ids.begin(), ids.begin() + static_cast<std::ptrdiff_t>(split));
  corpus.val.assign(ids.begin() + static_cast<std::ptrdiff_t>(split), ids.end());
  return corpus;
}

std::string ReadTextFile(const std::string& path) {
  // Regular files only (a folder, FIFO or device is named as such), at most 256 MB.
  const std::vector<uint8_t> bytes = ReadWholeFile(path, size_t{256} << 20);
  return std::string(bytes.begin(), bytes.end());
}

void TextBatch(const std::vector<int64_t>& tokens, int64_t block, int64_t batch, uint64_t seed,
               const std::string& stream, uint64_t index, Tensor* x, Tensor* y) {
  const int64_t n = static_cast<int64_t>(tokens.size());
  LOCKSTEP_REQUIRE(block >= 1 && batch >= 1, "text batch: block and batch must be positive");
  LOCKSTEP_REQUIRE(n > block, "text batch: " << n << " tokens are too few for a block of " << block);
  const std::vector<uint32_t> words =
      host::PhiloxWords(seed, StreamId(stream), index * static_cast<uint64_t>(batch), static_cast<size_t>(batch));
  std::vector<int64_t> xs, ys;
  xs.reserve(static_cast<size_t>(batch * block));
  ys.reserve(static_cast<size_t>(batch * block));
  for (int64_t b = 0; b < batch; ++b) {
    const int64_t start = static_cast<int64_t>((uint64_t{words[static_cast<size_t>(b)]} * static_cast<uint64_t>(n - block)) >> 32);
    xs.insert(xs.end(), tokens.begin() + start, tokens.begin() + start + block);
    ys.insert(ys.end(), tokens.begin() + start + 1, tokens.begin() + start + block + 1);
  }
  *x = Tensor::FromInt64({batch, block}, xs);
  *y = Tensor::FromInt64({batch, block}, ys);
}

}  // namespace lockstep
