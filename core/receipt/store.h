// Where a receipt and the training states kept beside it are written and read: the file system
// (the CLI, the C ABI, Python), or memory (the npm package, whose module has no file system: the
// receipt and its states are handed to JavaScript as bytes, and handed back to verify).
#ifndef LOCKSTEP_CORE_RECEIPT_STORE_H_
#define LOCKSTEP_CORE_RECEIPT_STORE_H_

#include <stddef.h>
#include <stdint.h>

#include <map>
#include <string>
#include <vector>

namespace lockstep {
namespace receipt {

class Store {
 public:
  virtual ~Store() = default;
  // Throws lockstep::Error if `path` cannot be written (checked before a run starts).
  virtual void RequireWritable(const std::string& path) const = 0;
  // Replaces `path` whole: a reader never sees a part of it.
  virtual void Write(const std::string& path, const std::vector<uint8_t>& bytes) = 0;
  // Throws lockstep::Error (kind kIo) for a path that is not there, or more than max_bytes.
  virtual std::vector<uint8_t> Read(const std::string& path, size_t max_bytes) const = 0;
};

// The file system.
Store& FileStore();

// Named byte strings in memory.
class MemoryStore : public Store {
 public:
  void RequireWritable(const std::string&) const override {}
  void Write(const std::string& path, const std::vector<uint8_t>& bytes) override { files[path] = bytes; }
  std::vector<uint8_t> Read(const std::string& path, size_t max_bytes) const override;
  std::map<std::string, std::vector<uint8_t>> files;
};

}  // namespace receipt
}  // namespace lockstep

#endif  // LOCKSTEP_CORE_RECEIPT_STORE_H_
