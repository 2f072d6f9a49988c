// BLAKE3's compression function on many independent inputs at once, one input per SIMD lane:
// whole 1024-byte chunks, or parent nodes (two children's chaining values). simd/blake3.h builds
// the hash's tree from these; the words are those of the scalar compression on every target and
// byte order (integer additions, xors and rotations only).
#ifndef LOCKSTEP_SIMD_BLAKE3_LANES_H_
#define LOCKSTEP_SIMD_BLAKE3_LANES_H_

#include <stddef.h>
#include <stdint.h>

namespace lockstep {
namespace simd {

// BLAKE3's initial chaining value (SHA-256's), the key of its hash mode, the only mode used.
constexpr uint32_t kBlake3Iv[8] = {0x6A09E667u, 0xBB67AE85u, 0x3C6EF372u, 0xA54FF53Au,
                                   0x510E527Fu, 0x9B05688Cu, 0x1F83D9ABu, 0x5BE0CD19u};

// BLAKE3's domain flags.
enum Blake3Flag : uint32_t {
  kBlake3ChunkStart = 1,
  kBlake3ChunkEnd = 2,
  kBlake3Parent = 4,
  kBlake3Root = 8,
};

// cvs[8 i .. 8 i + 7] = the chaining value of chunk i of `count` whole chunks lying one after
// another at `chunks`, chunk i having the counter first_counter + i.
void Blake3Chunks(const uint8_t* chunks, size_t count, uint64_t first_counter, uint32_t* cvs);

// A group of whole chunks, one per lane, compressed a few blocks a call (a receipt's hashing in
// the pool's short waits): `count` chunks (at most Blake3GroupLanes()) at `chunks` with counters
// first_counter + l; blocks [first_block, first_block + blocks) of each, of the 16. `state` (8
// words a lane) holds the lanes' chaining values between calls (first_block 0 starts them from the
// initial value); the call that compresses block 15 writes chunk l's chaining value to cvs[8 l .. 8 l + 7].
// The SIMD target must not change while a group is in flight (its lane count sizes the state).
size_t Blake3GroupLanes();
void Blake3ChunkGroup(const uint8_t* chunks, size_t count, uint64_t first_counter,
                      size_t first_block, size_t blocks, uint32_t* state, uint32_t* cvs);

// out[8 i .. 8 i + 7] = the chaining value of the parent node whose block is the two children's
// chaining values children[16 i .. 16 i + 15] (not the root). out may be children (a tree's
// next level in place).
void Blake3Parents(const uint32_t* children, size_t count, uint32_t* out);

}  // namespace simd
}  // namespace lockstep

#endif  // LOCKSTEP_SIMD_BLAKE3_LANES_H_
