// SHA-256 against FIPS 180-4 examples, and the floating-point environment check.
#include <doctest/doctest.h>

#include <stdexcept>
#include <string>

#include "core/fp_environment.h"
#include "core/sha256.h"

#if defined(__x86_64__)
#include <xmmintrin.h>
#endif

namespace lockstep {
namespace {

TEST_CASE("SHA-256 matches the FIPS 180-4 examples") {
  CHECK(Sha256Hex("", 0) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  CHECK(Sha256Hex("abc", 3) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  const std::string two_blocks = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
  CHECK(Sha256Hex(two_blocks.data(), two_blocks.size()) ==
        "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  // Fed in odd pieces, the digest is the same.
  Sha256 pieces;
  for (char c : two_blocks) pieces.Update(&c, 1);
  CHECK(pieces.HexDigest() == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  const std::string million(1000000, 'a');
  CHECK(Sha256Hex(million.data(), million.size()) ==
        "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
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
