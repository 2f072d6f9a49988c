// SHA-256 against FIPS 180-4 examples and across chunkings and compressors, and the
// floating-point environment check.
#include <doctest/doctest.h>

#include <stdint.h>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/fp_environment.h"
#include "core/sha256.h"

#if defined(__x86_64__)
#include <xmmintrin.h>
#endif

namespace lockstep {
namespace {

TEST_CASE("SHA-256 matches the FIPS 180-4 examples") {
  // Both compressors: SHA-NI (where the CPU has it), then the portable one.
  struct RestorePortable {
    ~RestorePortable() { Sha256ForcePortableForTesting(false); }
  } restore;
  for (const bool portable : {false, true}) {
    CAPTURE(portable);
    Sha256ForcePortableForTesting(portable);
    CHECK(Sha256Hex("", 0) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    CHECK(Sha256Hex("abc", 3) ==
          "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    const std::string two_blocks = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
    CHECK(Sha256Hex(two_blocks.data(), two_blocks.size()) ==
          "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
    // Fed in odd pieces, the digest is the same.
    Sha256 pieces;
    for (char c : two_blocks) pieces.Update(&c, 1);
    CHECK(pieces.HexDigest() ==
          "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
    const std::string million(1000000, 'a');
    CHECK(Sha256Hex(million.data(), million.size()) ==
          "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
  }
}

// Deterministic pseudo-random bytes (a 64-bit LCG's high bits).
std::vector<uint8_t> PseudoRandomBytes(size_t size, uint64_t seed) {
  std::vector<uint8_t> bytes(size);
  for (uint8_t& b : bytes) {
    seed = seed * 6364136223846793005u + 1442695040888963407u;
    b = static_cast<uint8_t>(seed >> 56);
  }
  return bytes;
}

// Feeds data in pseudo-random chunk sizes (0 to max_chunk bytes) so every buffering case is hit.
std::string Sha256InChunks(const std::vector<uint8_t>& data, size_t max_chunk, uint64_t seed) {
  Sha256 hasher;
  size_t at = 0;
  while (at < data.size()) {
    seed = seed * 6364136223846793005u + 1442695040888963407u;
    size_t take = static_cast<size_t>(seed >> 33) % (max_chunk + 1);
    if (take > data.size() - at) take = data.size() - at;
    hasher.Update(data.data() + at, take);
    at += take;
  }
  return hasher.HexDigest();
}

TEST_CASE("SHA-256 is the same however the input is split, and on every compressor") {
  // Forced portable, this compares the SHA-NI path (where the CPU has it) with the scalar one;
  // elsewhere both runs use the scalar path and the test checks chunking only.
  struct RestorePortable {
    ~RestorePortable() { Sha256ForcePortableForTesting(false); }
  } restore;
  const std::vector<uint8_t> small = PseudoRandomBytes(1000, 1);
  for (size_t length = 0; length <= small.size(); ++length) {
    const std::vector<uint8_t> data(small.begin(), small.begin() + length);
    Sha256ForcePortableForTesting(true);
    const std::string portable = Sha256Hex(data.data(), data.size());
    Sha256ForcePortableForTesting(false);
    CAPTURE(length);
    CHECK(Sha256Hex(data.data(), data.size()) == portable);
    CHECK(Sha256InChunks(data, 70, length) == portable);
  }
  for (const size_t size : {size_t{1} << 20, (size_t{1} << 20) + 37}) {
    const std::vector<uint8_t> data = PseudoRandomBytes(size, size);
    Sha256ForcePortableForTesting(true);
    const std::string portable = Sha256Hex(data.data(), data.size());
    const std::string portable_chunks = Sha256InChunks(data, 5000, 7);
    Sha256ForcePortableForTesting(false);
    CAPTURE(size);
    CHECK(portable_chunks == portable);
    CHECK(Sha256Hex(data.data(), data.size()) == portable);
    CHECK(Sha256InChunks(data, 5000, 3) == portable);
    CHECK(Sha256InChunks(data, 200, 11) == portable);
  }
  // A null pointer with size 0 is a no-op.
  Sha256 empty;
  empty.Update(nullptr, 0);
  CHECK(empty.HexDigest() == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

TEST_CASE("two messages hashed together give each one's own digest") {
  // Sizes and chunkings that start the two at different partial blocks and end them apart, so
  // every case of the paired update is hit: both whole, one behind, one empty.
  const std::vector<uint8_t> x = PseudoRandomBytes(70000, 5), y = PseudoRandomBytes(50021, 6);
  const std::string x_alone = Sha256Hex(x.data(), x.size()), y_alone = Sha256Hex(y.data(), y.size());
  for (const size_t chunk_x : {size_t{64}, size_t{100}, size_t{4096}, size_t{70000}}) {
    for (const size_t lead_y : {size_t{0}, size_t{1}, size_t{63}, size_t{64}, size_t{200}}) {
      CAPTURE(chunk_x);
      CAPTURE(lead_y);
      Sha256 a, b;
      b.Update(y.data(), lead_y);
      size_t at_x = 0, at_y = lead_y;
      while (at_x < x.size() || at_y < y.size()) {
        const size_t take_x = std::min(chunk_x, x.size() - at_x), take_y = std::min(chunk_x / 2 + 3, y.size() - at_y);
        Sha256::UpdateTwo(a, x.data() + at_x, take_x, b, y.data() + at_y, take_y);
        at_x += take_x;
        at_y += take_y;
      }
      CHECK(a.HexDigest() == x_alone);
      CHECK(b.HexDigest() == y_alone);
    }
  }
}

TEST_CASE("the default floating-point environment satisfies the contract") {
  CHECK(DescribeFloatingPointProblem().empty());
  CHECK_NOTHROW(RequireContractFloatingPoint());
}

#if defined(__x86_64__)
TEST_CASE("flush-to-zero and denormals-are-zero are refused with a clear message") {
  const unsigned saved = _mm_getcsr();
  _mm_setcsr(saved | (1u << 15));
  CHECK(DescribeFloatingPointProblem().find("flush-to-zero") != std::string::npos);
  CHECK_THROWS_AS(RequireContractFloatingPoint(), std::runtime_error);
  _mm_setcsr(saved | (1u << 6));
  CHECK(DescribeFloatingPointProblem().find("denormals-are-zero") != std::string::npos);
  _mm_setcsr(saved | (1u << 13));
  CHECK(DescribeFloatingPointProblem().find("rounding mode") != std::string::npos);
  _mm_setcsr(saved);
  CHECK(DescribeFloatingPointProblem().empty());
}
#endif

}  // namespace
}  // namespace lockstep
