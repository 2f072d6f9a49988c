// File I/O for checkpoints, training state and data sets. Every failure is a lockstep::Error that
// names the path and the reason (kind kIo, or kArgument for a path that cannot be a file), and
// nothing half-written is ever left under the target's name.
//
// Reading takes regular files only: a FIFO without a writer would block forever and a device
// such as /dev/zero never ends, so both are refused before any byte is read (the file is opened
// without blocking, then inspected).
//
// Writing replaces the target atomically (a temporary file beside it, fsync, rename). The target
// must be a regular file or not exist yet; a symbolic link is written through (the file it names
// is replaced, the link stays); a device node, FIFO, socket or folder is refused. A replaced file
// keeps its permission bits (and, where allowed, its owner).
#ifndef LOCKSTEP_CORE_IO_FILES_H_
#define LOCKSTEP_CORE_IO_FILES_H_

#include <stddef.h>
#include <stdint.h>

#include <functional>
#include <string>
#include <vector>

namespace lockstep {

// Asked between chunks of long reads; returning true stops the read with an Error of kind
// kCancelled (Ctrl-C while a large data set loads).
using CancelFn = std::function<bool()>;

// An open regular file for reading, closed by the destructor.
class InputFile {
 public:
  explicit InputFile(const std::string& path);
  ~InputFile();
  InputFile(const InputFile&) = delete;
  InputFile& operator=(const InputFile&) = delete;

  const std::string& path() const { return path_; }
  uint64_t size() const { return size_; }
  // Reads exactly n bytes at offset into dst, in chunks, asking cancelled() between them. A file
  // that ends earlier (it shrank) is an error naming both sizes.
  void ReadAt(uint64_t offset, void* dst, size_t n, const CancelFn& cancelled = {}) const;

 private:
  std::string path_;
  int fd_ = -1;
  uint64_t size_ = 0;
};

// The whole content of a regular file of at most max_bytes.
std::vector<uint8_t> ReadWholeFile(const std::string& path, size_t max_bytes);

// Replaces (or creates) path with bytes, atomically, as described above.
void WriteFileAtomic(const std::string& path, const std::vector<uint8_t>& bytes);

// Checks, without writing, that WriteFileAtomic(path, ...) can succeed: a path that can name a
// file, a target that is a regular file or does not exist, a folder the process may write in.
// Long work that ends by writing a file calls it first, so that a bad target fails at once.
void RequireWritableFile(const std::string& path);

// Throws kArgument for a path that cannot name a file ("" or ending in '/'), naming `what` (a
// flag or field name) and the path.
void RequireFilePath(const std::string& path, const char* what);

}  // namespace lockstep

#endif  // LOCKSTEP_CORE_IO_FILES_H_
