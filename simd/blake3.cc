// BLAKE3's tree over 1024-byte chunks, built incrementally as the reference implementation does:
// a stack of completed subtrees' chaining values, merged lazily so that the last ones pushed can
// still become the root. Long aligned runs of whole chunks go to Blake3Chunks and
// Blake3Parents; the partial chunk and the few merges on the stack compress here, scalar.
#include "simd/blake3.h"

#include <string.h>

#include <algorithm>

#include "simd/blake3_lanes.h"

namespace lockstep {
namespace simd {
namespace {

constexpr uint8_t kPermutation[16] = {2, 6, 3, 10, 7, 0, 4, 13, 1, 11, 12, 5, 9, 14, 15, 8};
constexpr size_t kChunkBytes = 1024;
constexpr size_t kSubtreeChunks = Blake3::kSubtreeBytes / kChunkBytes;

inline uint32_t RotateRight(uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }

inline void G(uint32_t* v, int a, int b, int c, int d, uint32_t mx, uint32_t my) {
  v[a] = v[a] + v[b] + mx;
  v[d] = RotateRight(v[d] ^ v[a], 16);
  v[c] = v[c] + v[d];
  v[b] = RotateRight(v[b] ^ v[c], 12);
  v[a] = v[a] + v[b] + my;
  v[d] = RotateRight(v[d] ^ v[a], 8);
  v[c] = v[c] + v[d];
  v[b] = RotateRight(v[b] ^ v[c], 7);
}

// The compression function; out[16] = the whole state (its first 8 words the chaining value).
void Compress(const uint32_t cv[8], const uint32_t block[16], uint64_t counter, uint32_t block_len, uint32_t flags,
              uint32_t out[16]) {
  uint32_t v[16] = {cv[0],  cv[1],  cv[2],  cv[3],  cv[4],  cv[5],  cv[6],
                    cv[7],  kBlake3Iv[0], kBlake3Iv[1], kBlake3Iv[2], kBlake3Iv[3], static_cast<uint32_t>(counter),
                    static_cast<uint32_t>(counter >> 32), block_len, flags};
  uint32_t m[16];
  memcpy(m, block, sizeof(m));
  for (int round = 0; round < 7; ++round) {
    G(v, 0, 4, 8, 12, m[0], m[1]);
    G(v, 1, 5, 9, 13, m[2], m[3]);
    G(v, 2, 6, 10, 14, m[4], m[5]);
    G(v, 3, 7, 11, 15, m[6], m[7]);
    G(v, 0, 5, 10, 15, m[8], m[9]);
    G(v, 1, 6, 11, 12, m[10], m[11]);
    G(v, 2, 7, 8, 13, m[12], m[13]);
    G(v, 3, 4, 9, 14, m[14], m[15]);
    uint32_t permuted[16];
    for (int i = 0; i < 16; ++i) permuted[i] = m[kPermutation[i]];
    memcpy(m, permuted, sizeof(m));
  }
  for (int i = 0; i < 8; ++i) {
    out[i] = v[i] ^ v[i + 8];
    out[i + 8] = v[i + 8] ^ cv[i];
  }
}

// A block's bytes as its 16 little-endian words (the same on every host).
void Words(const uint8_t* bytes, uint32_t words[16]) {
  for (int i = 0; i < 16; ++i) {
    const uint8_t* p = bytes + 4 * i;
    words[i] = static_cast<uint32_t>(p[0]) | static_cast<uint32_t>(p[1]) << 8 | static_cast<uint32_t>(p[2]) << 16 |
               static_cast<uint32_t>(p[3]) << 24;
  }
}

void CompressBytes(uint32_t cv[8], const uint8_t block[64], uint64_t counter, uint32_t block_len, uint32_t flags) {
  uint32_t words[16], out[16];
  Words(block, words);
  Compress(cv, words, counter, block_len, flags, out);
  memcpy(cv, out, 8 * sizeof(uint32_t));
}

void ParentChainingValue(const uint32_t left[8], const uint32_t right[8], uint32_t out[8]) {
  uint32_t block[16], state[16];
  memcpy(block, left, 8 * sizeof(uint32_t));
  memcpy(block + 8, right, 8 * sizeof(uint32_t));
  Compress(kBlake3Iv, block, 0, 64, kBlake3Parent, state);
  memcpy(out, state, 8 * sizeof(uint32_t));
}

// The largest power of two <= x (x > 0).
uint64_t FloorPowerOfTwo(uint64_t x) {
  uint64_t p = 1;
  while (p <= x / 2) p *= 2;
  return p;
}

int PopCount(uint64_t x) {
  int n = 0;
  for (; x != 0; x &= x - 1) ++n;
  return n;
}

// The two children of the root of a subtree of `chunks` whole chunks (a power of two, at least
// 2) starting at chunk `counter`: every chunk in SIMD lanes, then each level of parents.
void SubtreeChildren(const uint8_t* data, size_t chunks, uint64_t counter, uint32_t left[8], uint32_t right[8]) {
  uint32_t cvs[kSubtreeChunks * 8];
  Blake3Chunks(data, chunks, counter, cvs);
  for (size_t n = chunks; n > 2; n /= 2) Blake3Parents(cvs, n / 2, cvs);
  memcpy(left, cvs, 8 * sizeof(uint32_t));
  memcpy(right, cvs + 8, 8 * sizeof(uint32_t));
}

}  // namespace

void Blake3::ChunkState::Start(uint64_t chunk_counter) {
  memcpy(cv, kBlake3Iv, 8 * sizeof(uint32_t));
  memset(block, 0, sizeof(block));  // a short last block is padded with zeros
  block_len = blocks_compressed = 0;
  counter = chunk_counter;
}

uint32_t Blake3::ChunkState::StartFlag() const { return blocks_compressed == 0 ? kBlake3ChunkStart : 0u; }

void Blake3::ChunkState::Update(const uint8_t* data, size_t size) {
  while (size > 0) {
    if (block_len == 64) {  // full, and more follows: it is not the chunk's last block
      CompressBytes(cv, block, counter, 64, StartFlag());
      ++blocks_compressed;
      memset(block, 0, sizeof(block));
      block_len = 0;
    }
    const size_t take = std::min(size, 64 - block_len);
    memcpy(block + block_len, data, take);
    block_len += take;
    data += take;
    size -= take;
  }
}

Blake3::Blake3() { Reset(); }

void Blake3::Reset() {
  chunk_.Start(0);
  stack_len_ = 0;
}

void Blake3::MergeStack(uint64_t total_chunks) {
  const size_t keep = static_cast<size_t>(PopCount(total_chunks));
  while (stack_len_ > keep) {
    ParentChainingValue(stack_[stack_len_ - 2], stack_[stack_len_ - 1], stack_[stack_len_ - 2]);
    --stack_len_;
  }
}

void Blake3::PushChainingValue(const uint32_t cv[8], uint64_t chunk_counter) {
  MergeStack(chunk_counter);
  memcpy(stack_[stack_len_++], cv, 8 * sizeof(uint32_t));
}

void Blake3::Update(const void* data, size_t size) {
  const uint8_t* in = static_cast<const uint8_t*>(data);
  if (chunk_.length() > 0) {  // finish the chunk begun
    const size_t take = std::min(size, kChunkBytes - chunk_.length());
    chunk_.Update(in, take);
    in += take;
    size -= take;
    if (size == 0) return;
    // Full, and more follows: not the root.
    uint32_t out[16], words[16];
    Words(chunk_.block, words);
    Compress(chunk_.cv, words, chunk_.counter, static_cast<uint32_t>(chunk_.block_len),
             chunk_.StartFlag() | kBlake3ChunkEnd, out);
    PushChainingValue(out, chunk_.counter);
    chunk_.Start(chunk_.counter + 1);
  }
  // More than one chunk left: none of them is the root chunk. The largest aligned power-of-two
  // run of whole chunks goes at once (at most kSubtreeChunks); the two children of a subtree are
  // pushed unmerged, since they may be the root's.
  while (size > kChunkBytes) {
    uint64_t chunks = std::min<uint64_t>(FloorPowerOfTwo(size / kChunkBytes), kSubtreeChunks);
    while ((chunk_.counter & (chunks - 1)) != 0) chunks /= 2;
    if (chunks == 1) {
      uint32_t cv[8];
      Blake3Chunks(in, 1, chunk_.counter, cv);
      PushChainingValue(cv, chunk_.counter);
    } else {
      uint32_t left[8], right[8];
      SubtreeChildren(in, chunks, chunk_.counter, left, right);
      PushChainingValue(left, chunk_.counter);
      PushChainingValue(right, chunk_.counter + chunks / 2);
    }
    chunk_.Start(chunk_.counter + chunks);
    in += chunks * kChunkBytes;
    size -= chunks * kChunkBytes;
  }
  if (size > 0) {
    chunk_.Update(in, size);
    MergeStack(chunk_.counter);
  }
}

std::array<uint8_t, 32> Blake3::Digest() {
  // The root: the last chunk alone, or the last chunk (or the top two subtrees, when the input
  // ended on a chunk boundary) merged with every subtree on the stack, the final merge marked.
  uint32_t block[16], cv[8], flags, block_len;
  uint64_t counter;
  size_t remaining;
  if (stack_len_ == 0 || chunk_.length() > 0) {
    Words(chunk_.block, block);
    memcpy(cv, chunk_.cv, sizeof(cv));
    flags = chunk_.StartFlag() | kBlake3ChunkEnd;
    block_len = static_cast<uint32_t>(chunk_.block_len);
    counter = chunk_.counter;
    remaining = stack_len_;
  } else {
    remaining = stack_len_ - 2;
    memcpy(block, stack_[remaining], 8 * sizeof(uint32_t));
    memcpy(block + 8, stack_[remaining + 1], 8 * sizeof(uint32_t));
    memcpy(cv, kBlake3Iv, 8 * sizeof(uint32_t));
    flags = kBlake3Parent;
    block_len = 64;
    counter = 0;
  }
  while (remaining > 0) {  // the pending output becomes a right child
    uint32_t state[16];
    Compress(cv, block, counter, block_len, flags, state);
    --remaining;
    memcpy(block, stack_[remaining], 8 * sizeof(uint32_t));
    memcpy(block + 8, state, 8 * sizeof(uint32_t));
    memcpy(cv, kBlake3Iv, 8 * sizeof(uint32_t));
    flags = kBlake3Parent;
    block_len = 64;
    counter = 0;
  }
  uint32_t state[16];
  Compress(cv, block, counter, block_len, flags | kBlake3Root, state);
  std::array<uint8_t, 32> digest;
  for (int i = 0; i < 8; ++i) {
    for (int b = 0; b < 4; ++b) digest[4 * i + b] = static_cast<uint8_t>(state[i] >> (8 * b));
  }
  return digest;
}

void Blake3::PushSubtree(const uint32_t left[8], const uint32_t right[8], uint64_t chunks) {
  PushChainingValue(left, chunk_.counter);
  PushChainingValue(right, chunk_.counter + chunks / 2);
  chunk_.Start(chunk_.counter + chunks);
}

void Blake3::PushChunk(const uint32_t cv[8]) {
  PushChainingValue(cv, chunk_.counter);
  chunk_.Start(chunk_.counter + 1);
}

void Blake3Sliced::Start(const uint8_t* data, size_t size) {
  tree_.Reset();
  data_ = data;
  size_ = size;
  offset_ = group_ = block_ = 0;
  // Whole groups are subtrees, so of a power of two of chunks; a target whose vectors hold another
  // number of lanes takes the chunks through Blake3::Update.
  lanes_ = Blake3GroupLanes();
  if (lanes_ < 2 || (lanes_ & (lanes_ - 1)) != 0) lanes_ = 0;
  state_.resize(8 * lanes_);
  cvs_.resize(8 * lanes_);
}

size_t Blake3Sliced::Advance(size_t budget) {
  size_t spent = 0;
  while (offset_ < size_ && spent < budget) {
    const size_t whole = (size_ - offset_) / kChunkBytes;
    if (group_ == 0 && lanes_ != 0 && whole >= 2) group_ = std::min(whole, lanes_);
    if (group_ == 0) {  // the last partial chunk (or every chunk, without groups): a block or so a call
      const size_t n = std::min(size_ - offset_, std::max<size_t>(64, budget - spent));
      tree_.Update(data_ + offset_, n);
      offset_ += n;
      spent += n;
      continue;
    }
    // A group of whole chunks, a block of each a call where the budget is small.
    const size_t per_block = group_ * 64;
    const size_t blocks = std::min<size_t>(16 - block_, std::max<size_t>(1, (budget - spent) / per_block));
    Blake3ChunkGroup(data_ + offset_, group_, tree_.chunk_.counter, block_, blocks, state_.data(),
                           cvs_.data());
    block_ += blocks;
    spent += blocks * lanes_ * 64;  // the vectors' work, whatever the chunks in use
    if (block_ < 16) continue;
    if (group_ == lanes_) {  // a whole subtree (groups start at multiples of lanes_ chunks)
      for (size_t n = lanes_; n > 2; n /= 2) Blake3Parents(cvs_.data(), n / 2, cvs_.data());
      tree_.PushSubtree(cvs_.data(), cvs_.data() + 8, lanes_);
    } else {  // the last, fewer chunks (at least two): each its own; the tree merges them
      for (size_t c = 0; c < group_; ++c) tree_.PushChunk(cvs_.data() + 8 * c);
    }
    offset_ += group_ * kChunkBytes;
    group_ = block_ = 0;
  }
  return spent;
}

std::array<uint8_t, 32> Blake3Digest(const void* data, size_t size) {
  Blake3 hasher;
  hasher.Update(data, size);
  return hasher.Digest();
}

}  // namespace simd
}  // namespace lockstep
