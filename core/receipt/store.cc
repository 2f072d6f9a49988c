#include "core/receipt/store.h"

#include "core/error.h"
#include "core/io/files.h"

namespace lockstep {
namespace receipt {

namespace {

class Files : public Store {
 public:
  void RequireWritable(const std::string& path) const override { RequireWritableFile(path); }
  void Write(const std::string& path, const std::vector<uint8_t>& bytes) override { WriteFileAtomic(path, bytes); }
  std::vector<uint8_t> Read(const std::string& path, size_t max_bytes) const override {
    return ReadWholeFile(path, max_bytes);
  }
};

}  // namespace

Store& FileStore() {
  static Files files;
  return files;
}

std::vector<uint8_t> MemoryStore::Read(const std::string& path, size_t max_bytes) const {
  auto it = files.find(path);
  LOCKSTEP_REQUIRE_KIND(ErrorKind::kIo, it != files.end(), path << ": not among the " << files.size() << " files given");
  LOCKSTEP_REQUIRE_KIND(ErrorKind::kResource, it->second.size() <= max_bytes,
                        path << ": " << it->second.size() << " bytes, more than the " << max_bytes << " expected at most");
  return it->second;
}

}  // namespace receipt
}  // namespace lockstep
