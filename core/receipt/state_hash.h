// What a training receipt binds at each step (docs/verifiable-training.md): the training state as
// a Merkle root over one leaf per tensor (parameters and buffers, optimizer state) and per counter
// (the optimizer's step, the random streams' offsets), so that one tensor can be proven without
// the others; and the batch the step trained on.
//
// leaf     = SHA-256(0x00 || name || 0x00 || dtype || 0x00 || rank || dims || BLAKE3(content))
// node     = SHA-256(0x01 || left || right)   (an odd node at the end of a level moves up as it is)
// The leaves are sorted by name; a tensor's content is its checkpoint bytes, an integer's its
// 8 little-endian bytes. The content, nearly every byte a step hashes, goes through BLAKE3
// (simd/blake3.h: several times SHA-256's speed on one core), the rest through SHA-256.
#ifndef LOCKSTEP_CORE_RECEIPT_STATE_HASH_H_
#define LOCKSTEP_CORE_RECEIPT_STATE_HASH_H_

#include <stdint.h>

#include <array>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "core/nn/module.h"
#include "core/optim/optimizer.h"
#include "core/sha256.h"
#include "core/tensor.h"
#include "simd/blake3.h"

namespace lockstep {
namespace receipt {

using Digest = std::array<uint8_t, 32>;

Digest TensorLeaf(const std::string& name, const Tensor& t);
// A leaf's prefix (its domain byte, then the name, the type and the shape, each self-delimiting):
// the leaf is the SHA-256 of it and the BLAKE3 digest of the content.
void StartLeaf(Sha256& sha, const std::string& name, const char* dtype, const std::vector<int64_t>& shape);
Digest FinishLeaf(Sha256& sha, const Digest& content);
Digest IntegerLeaf(const std::string& name, uint64_t value);
// The root of the tree over (name, leaf) pairs; names must be distinct. No leaves: SHA-256 of "".
Digest MerkleRoot(std::vector<std::pair<std::string, Digest>> leaves);
// The same in two parts, for leaves whose names stay while their digests change: the leaves'
// indices sorted by name (throws on two alike), then the root over digests in that order.
std::vector<size_t> MerkleOrder(const std::vector<std::string>& names);
Digest MerkleRootInOrder(std::vector<Digest> sorted);

// What a training state's tree is made of, by leaf name: the tensors "model.<state dict name>" and
// "optimizer.<state name>", the counters "optimizer.step" and "rng.<stream>" (each random stream's
// offset). The one list of a state's leaves: StateLeaves and the step hasher both read it.
struct StateParts {
  std::vector<std::pair<std::string, Tensor>> tensors;
  std::vector<std::pair<std::string, uint64_t>> counters;
};
StateParts PartsOf(const nn::Module& model, const optim::Optimizer& optimizer,
                   const std::map<std::string, uint64_t>& rng_offsets);
// The counters' values alone, in PartsOf's order (for a caller that keeps their names).
std::vector<uint64_t> CounterValues(const optim::Optimizer& optimizer,
                                    const std::map<std::string, uint64_t>& rng_offsets);

// The leaves of a training state (PartsOf's, hashed).
std::vector<std::pair<std::string, Digest>> StateLeaves(const nn::Module& model, const optim::Optimizer& optimizer,
                                                        const std::map<std::string, uint64_t>& rng_offsets);
Digest StateRoot(const nn::Module& model, const optim::Optimizer& optimizer,
                 const std::map<std::string, uint64_t>& rng_offsets);

// The batch a step trained on: SHA-256 over the inputs' leaf and the labels' leaf.
Digest BatchDigest(const Tensor& inputs, const Tensor& labels);
Digest BatchDigestOfLeaves(const Digest& inputs, const Digest& labels);

// h_k = SHA-256(h_{k-1} || state_k || batch_k).
Digest ChainLink(const Digest& previous, const Digest& state, const Digest& batch);

std::string Hex(const Digest& digest);
// Parses 64 hex digits; false when `text` is not one.
bool ParseHex(const std::string& text, Digest* out);
Digest Sha256Digest(const void* data, size_t size);

}  // namespace receipt
}  // namespace lockstep

#endif  // LOCKSTEP_CORE_RECEIPT_STATE_HASH_H_
