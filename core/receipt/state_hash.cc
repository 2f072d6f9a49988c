#include "core/receipt/state_hash.h"

#include <string.h>

#include <algorithm>

#include "core/checkpoint.h"
#include "core/error.h"
#include "core/io/byte_order.h"
#include "core/sha256.h"

namespace lockstep {
namespace receipt {

namespace {

void UpdateU64(Sha256& sha, uint64_t value) {
  uint8_t bytes[8];
  StoreLittleEndian64(value, bytes);
  sha.Update(bytes, 8);
}

}  // namespace

void StartLeaf(Sha256& sha, const std::string& name, const char* dtype, const std::vector<int64_t>& shape) {
  const uint8_t zero = 0;
  sha.Update(&zero, 1);
  sha.Update(name.data(), name.size());
  sha.Update(&zero, 1);
  sha.Update(dtype, strlen(dtype));
  sha.Update(&zero, 1);
  UpdateU64(sha, shape.size());
  for (int64_t d : shape) UpdateU64(sha, static_cast<uint64_t>(d));
}

Digest Sha256Digest(const void* data, size_t size) {
  Sha256 sha;
  sha.Update(data, size);
  return sha.Digest();
}

Digest FinishLeaf(Sha256& sha, const Digest& content) {
  sha.Update(content.data(), content.size());
  return sha.Digest();
}

Digest TensorLeaf(const std::string& name, const Tensor& t) {
  Sha256 sha;
  StartLeaf(sha, name, DTypeName(t.dtype()), t.shape());
  simd::Blake3 content;
  CanonicalTensorBytes(t, [&](const uint8_t* data, size_t size) { content.Update(data, size); });
  return FinishLeaf(sha, content.Digest());
}

Digest IntegerLeaf(const std::string& name, uint64_t value) {
  Sha256 sha;
  StartLeaf(sha, name, "U64", {});
  uint8_t bytes[8];
  StoreLittleEndian64(value, bytes);
  simd::Blake3 content;
  content.Update(bytes, 8);
  return FinishLeaf(sha, content.Digest());
}

std::vector<size_t> MerkleOrder(const std::vector<std::string>& names) {
  std::vector<size_t> order(names.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return names[a] < names[b]; });
  for (size_t i = 1; i < order.size(); ++i) {
    LOCKSTEP_REQUIRE(names[order[i]] != names[order[i - 1]], "state hash: two leaves named '" << names[order[i]] << "'");
  }
  return order;
}

Digest MerkleRootInOrder(std::vector<Digest> level) {
  if (level.empty()) return Sha256Digest("", 0);
  while (level.size() > 1) {
    size_t up = 0;
    for (size_t i = 0; i + 1 < level.size(); i += 2) {
      uint8_t node[65];
      node[0] = 1;
      std::copy(level[i].begin(), level[i].end(), node + 1);
      std::copy(level[i + 1].begin(), level[i + 1].end(), node + 33);
      level[up++] = Sha256Digest(node, sizeof node);
    }
    if (level.size() % 2 == 1) level[up++] = level.back();
    level.resize(up);
  }
  return level[0];
}

Digest MerkleRoot(std::vector<std::pair<std::string, Digest>> leaves) {
  std::vector<std::string> names;
  for (const auto& leaf : leaves) names.push_back(leaf.first);
  std::vector<Digest> level;
  for (size_t i : MerkleOrder(names)) level.push_back(leaves[i].second);
  return MerkleRootInOrder(std::move(level));
}

StateParts PartsOf(const nn::Module& model, const optim::Optimizer& optimizer,
                   const std::map<std::string, uint64_t>& rng_offsets) {
  StateParts parts;
  for (const auto& [name, t] : model.StateDict()) parts.tensors.emplace_back("model." + name, t);
  for (const auto& [name, t] : optimizer.State()) parts.tensors.emplace_back("optimizer." + name, t);
  const std::vector<uint64_t> values = CounterValues(optimizer, rng_offsets);
  parts.counters.emplace_back("optimizer.step", values[0]);
  size_t i = 1;
  for (const auto& entry : rng_offsets) parts.counters.emplace_back("rng." + entry.first, values[i++]);
  return parts;
}

std::vector<uint64_t> CounterValues(const optim::Optimizer& optimizer,
                                    const std::map<std::string, uint64_t>& rng_offsets) {
  std::vector<uint64_t> values{static_cast<uint64_t>(optimizer.step_count())};
  for (const auto& entry : rng_offsets) values.push_back(entry.second);
  return values;
}

std::vector<std::pair<std::string, Digest>> StateLeaves(const nn::Module& model, const optim::Optimizer& optimizer,
                                                        const std::map<std::string, uint64_t>& rng_offsets) {
  const StateParts parts = PartsOf(model, optimizer, rng_offsets);
  std::vector<std::pair<std::string, Digest>> leaves;
  for (const auto& [name, t] : parts.tensors) leaves.emplace_back(name, TensorLeaf(name, t));
  for (const auto& [name, value] : parts.counters) leaves.emplace_back(name, IntegerLeaf(name, value));
  return leaves;
}

Digest StateRoot(const nn::Module& model, const optim::Optimizer& optimizer,
                 const std::map<std::string, uint64_t>& rng_offsets) {
  return MerkleRoot(StateLeaves(model, optimizer, rng_offsets));
}

Digest BatchDigest(const Tensor& inputs, const Tensor& labels) {
  return BatchDigestOfLeaves(TensorLeaf("inputs", inputs), TensorLeaf("labels", labels));
}

Digest BatchDigestOfLeaves(const Digest& x, const Digest& y) {
  uint8_t both[64];
  std::copy(x.begin(), x.end(), both);
  std::copy(y.begin(), y.end(), both + 32);
  return Sha256Digest(both, sizeof both);
}

Digest ChainLink(const Digest& previous, const Digest& state, const Digest& batch) {
  uint8_t link[96];
  std::copy(previous.begin(), previous.end(), link);
  std::copy(state.begin(), state.end(), link + 32);
  std::copy(batch.begin(), batch.end(), link + 64);
  return Sha256Digest(link, sizeof link);
}

std::string Hex(const Digest& digest) { return HexOf(digest.data(), digest.size()); }

bool ParseHex(const std::string& text, Digest* out) {
  if (text.size() != 64) return false;
  for (size_t i = 0; i < 32; ++i) {
    int v = 0;
    for (int j = 0; j < 2; ++j) {
      const char c = text[2 * i + j];
      const int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
      if (d < 0) return false;
      v = v * 16 + d;
    }
    (*out)[i] = static_cast<uint8_t>(v);
  }
  return true;
}

}  // namespace receipt
}  // namespace lockstep
