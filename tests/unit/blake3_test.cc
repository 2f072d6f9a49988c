// BLAKE3 (simd/blake3.h): the published test vectors on every SIMD target, and digests that do
// not depend on how the input is split between updates.
#include "simd/blake3.h"

#include <doctest/doctest.h>

#include <random>
#include <string>
#include <utility>
#include <vector>

#include "core/sha256.h"
#include "tests/unit/for_each_target.h"

namespace lockstep {
namespace simd {
namespace {

// The official vectors' input: bytes 0, 1, ..., 250, 0, 1, ...
std::vector<uint8_t> VectorInput(size_t length) {
  std::vector<uint8_t> input(length);
  for (size_t i = 0; i < length; ++i) input[i] = static_cast<uint8_t>(i % 251);
  return input;
}

std::string Hex(const std::array<uint8_t, 32>& digest) { return HexOf(digest.data(), digest.size()); }

// From BLAKE3's test_vectors.json: the hash mode's first 32 output bytes.
const std::pair<size_t, const char*> kVectors[] = {
    {0, "af1349b9f5f9a1a6a0404dea36dcc9499bcb25c9adc112b7cc9a93cae41f3262"},
    {1, "2d3adedff11b61f14c886e35afa036736dcd87a74d27b5c1510225d0f592e213"},
    {1023, "10108970eeda3eb932baac1428c7a2163b0e924c9a9e25b35bba72b28f70bd11"},
    {1024, "42214739f095a406f3fc83deb889744ac00df831c10daa55189b5d121c855af7"},
    {1025, "d00278ae47eb27b34faecf67b4fe263f82d5412916c1ffd97c8cb7fb814b8444"},
    {2048, "e776b6028c7cd22a4d0ba182a8bf62205d2ef576467e838ed6f2529b85fba24a"},
    {2049, "5f4d72f40d7a5f82b15ca2b2e44b1de3c2ef86c426c95c1af0b6879522563030"},
    {3072, "b98cb0ff3623be03326b373de6b9095218513e64f1ee2edd2525c7ad1e5cffd2"},
    {4097, "9b4052b38f1c5fc8b1f9ff7ac7b27cd242487b3d890d15c96a1c25b8aa0fb995"},
    {7169, "a003fc7a51754a9b3c7fae0367ab3d782dccf28855a03d435f8cfe74605e7817"},
    {8193, "bab6c09cb8ce8cf459261398d2e7aef35700bf488116ceb94a36d0f5f1b7bc3b"},
    {16384, "f875d6646de28985646f34ee13be9a576fd515f76b5b0a26bb324735041ddde4"},
    {31744, "62b6960e1a44bcc1eb1a611a8d6235b6b4b78f32e7abc4fb4c6cdcce94895c47"},
    {102400, "bc3e3d41a1146b069abffad3c0d44860cf664390afce4d9661f7902e7943e085"},
};

TEST_CASE("BLAKE3 matches the published test vectors on every target") {
  testing::ForEachTarget([](const simd::Target&) {
    for (const auto& vector : kVectors) {  // no structured binding: Clang 14 refuses one in INFO
      const size_t length = vector.first;
      INFO("input length " << length);
      const std::vector<uint8_t> input = VectorInput(length);
      CHECK(Hex(Blake3Digest(input.data(), input.size())) == vector.second);
    }
  });
}

TEST_CASE("BLAKE3 is the same however the input is split") {
  // Long enough for several whole subtrees, a partial one and a partial chunk; pieces of every
  // size from one byte to past a subtree, including the subtree size the receipts' hasher feeds.
  const std::vector<uint8_t> input = VectorInput(5 * Blake3::kSubtreeBytes + 3000);
  const std::string whole = Hex(Blake3Digest(input.data(), input.size()));
  std::mt19937 random(7);
  for (size_t piece : {size_t{1}, size_t{63}, size_t{64}, size_t{1000}, size_t{1024}, size_t{1025},
                       size_t{16384}, Blake3::kSubtreeBytes, Blake3::kSubtreeBytes + 1, size_t{0}}) {
    INFO("pieces of " << piece << " bytes (0: random sizes)");
    Blake3 hasher;
    for (size_t at = 0; at < input.size();) {
      const size_t n = std::min(input.size() - at, piece != 0 ? piece : size_t{1} + random() % 40000);
      hasher.Update(input.data() + at, n);
      at += n;
    }
    CHECK(Hex(hasher.Digest()) == whole);
  }
}

TEST_CASE("BLAKE3 a bounded amount at a time gives the same digest, moved or not, on every target") {
  testing::ForEachTarget([](const simd::Target&) {
    for (size_t length : {size_t{0}, size_t{1}, size_t{1024}, size_t{2048}, size_t{3072}, size_t{5000}, size_t{16384},
                          size_t{16385}, size_t{16384 + 2048},
                          size_t{100000}, size_t{3 * 65536 + 77}}) {
      const std::vector<uint8_t> input = VectorInput(length);
      const std::string expected = Hex(Blake3Digest(input.data(), input.size()));
      for (size_t budget : {size_t{1}, size_t{1024}, size_t{5000}, ~size_t{0}}) {
        INFO("length " << length << ", budget " << budget);
        Blake3Sliced sliced;
        sliced.Start(input.data(), input.size());
        std::vector<uint8_t> moved;
        size_t calls = 0;
        while (!sliced.done()) {
          CHECK(sliced.Advance(budget) > 0);  // every call makes progress
          if (++calls == 3) {  // the bytes move (a state leaf copied before the optimizer's update)
            moved = input;
            sliced.Rebase(moved.data());
          }
        }
        CHECK(Hex(sliced.Digest()) == expected);
        if (budget == 1) CHECK(calls >= length / 4096);  // small budgets, small steps
      }
    }
  });
}

}  // namespace
}  // namespace simd
}  // namespace lockstep
