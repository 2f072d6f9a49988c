#include "core/io/files.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <sstream>

#include "core/error.h"

namespace lockstep {
namespace {

std::string SystemError(int error_number) { return strerror(error_number); }

[[noreturn]] void FailIo(const std::string& message) { throw Error(message, ErrorKind::kIo); }

// "a FIFO", "a character device", ...: what a non-regular file is, for messages.
const char* FileTypeName(mode_t mode) {
  if (S_ISDIR(mode)) return "a folder";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISLNK(mode)) return "a symbolic link";
  return "not a regular file";
}

std::string ParentFolder(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

// "folder/.name.tmp-PID-N" beside "folder/name", with the name shortened so that a long file
// name still leaves room for the suffix.
std::string TemporaryPath(const std::string& path, unsigned n) {
  const size_t slash = path.find_last_of('/');
  const size_t name_start = slash == std::string::npos ? 0 : slash + 1;
  return path.substr(0, name_start) + "." + path.substr(name_start, 64) + ".tmp-" +
         std::to_string(static_cast<long>(getpid())) + "-" + std::to_string(n);
}

// The file a write to `path` replaces: path itself, or the file a symbolic link names. Sets
// *existing (and *info) when that file exists.
std::string WriteTarget(const std::string& path, bool* existing, struct stat* info) {
  *existing = false;
  struct stat link_info;
  if (lstat(path.c_str(), &link_info) != 0) {
    if (errno == ENOENT) return path;
    FailIo("cannot write '" + path + "': " + SystemError(errno));
  }
  std::string target = path;
  if (S_ISLNK(link_info.st_mode)) {
    char resolved[PATH_MAX];
    if (realpath(path.c_str(), resolved) == nullptr) {
      FailIo("cannot write '" + path + "': it is a symbolic link whose target cannot be resolved (" +
             SystemError(errno) + ")");
    }
    target = resolved;
  }
  if (stat(target.c_str(), info) != 0) FailIo("cannot write '" + path + "': " + SystemError(errno));
  if (!S_ISREG(info->st_mode)) {
    throw Error("cannot write '" + path + "': it is " + FileTypeName(info->st_mode) +
                    (target != path ? " (through the symbolic link to '" + target + "')" : std::string()) +
                    "; checkpoints are written to regular files only",
                ErrorKind::kArgument);
  }
  *existing = true;
  return target;
}

}  // namespace

void RequireWritableFile(const std::string& path) {
  RequireFilePath(path, "writing a file");
  bool existing = false;
  struct stat info;
  const std::string target = WriteTarget(path, &existing, &info);
  const std::string folder = ParentFolder(target);
  if (access(folder.c_str(), W_OK) != 0) {
    FailIo("cannot write '" + path + "': folder '" + folder + "': " + SystemError(errno));
  }
}

void RequireFilePath(const std::string& path, const char* what) {
  LOCKSTEP_REQUIRE(!path.empty(), what << ": expected the path of a file, got an empty string");
  LOCKSTEP_REQUIRE(path.back() != '/', what << ": expected the path of a file, got the folder '" << path << "'");
}

InputFile::InputFile(const std::string& path) : path_(path) {
  RequireFilePath(path, "reading a file");
  // O_NONBLOCK: opening a FIFO without a writer returns at once instead of waiting for one.
  fd_ = open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd_ < 0) FailIo("cannot read '" + path + "': " + SystemError(errno));
  struct stat info;
  if (fstat(fd_, &info) != 0) {
    const int e = errno;
    close(fd_);
    FailIo("cannot read '" + path + "': " + SystemError(e));
  }
  if (!S_ISREG(info.st_mode)) {
    close(fd_);
    throw Error("cannot read '" + path + "': it is " + FileTypeName(info.st_mode) + ", not a regular file",
                ErrorKind::kArgument);
  }
  size_ = static_cast<uint64_t>(info.st_size);
}

InputFile::~InputFile() {
  if (fd_ >= 0) close(fd_);
}

void InputFile::ReadAt(uint64_t offset, void* dst, size_t n, const CancelFn& cancelled) const {
  constexpr size_t kChunk = size_t{16} << 20;
  uint8_t* out = static_cast<uint8_t*>(dst);
  size_t done = 0;
  while (done < n) {
    if (cancelled && cancelled()) throw Error("reading '" + path_ + "' was cancelled", ErrorKind::kCancelled);
    const size_t want = n - done < kChunk ? n - done : kChunk;
    const ssize_t got = pread(fd_, out + done, want, static_cast<off_t>(offset + done));
    if (got < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (got < 0) FailIo("cannot read '" + path_ + "': " + SystemError(errno));
    if (got == 0) {
      FailIo("cannot read '" + path_ + "': it ends after " + std::to_string(offset + done) + " bytes, expected " +
             std::to_string(offset + n) + " (did it change while being read?)");
    }
    done += static_cast<size_t>(got);
  }
}

std::vector<uint8_t> ReadWholeFile(const std::string& path, size_t max_bytes) {
  const InputFile file(path);
  if (file.size() > max_bytes) {
    throw Error("cannot read '" + path + "': it is " + std::to_string(file.size()) +
                    " bytes, more than the limit of " + std::to_string(max_bytes),
                ErrorKind::kFormat);
  }
  std::vector<uint8_t> bytes(static_cast<size_t>(file.size()));
  file.ReadAt(0, bytes.data(), bytes.size());
  return bytes;
}

void WriteFileAtomic(const std::string& path, const std::vector<uint8_t>& bytes) {
  RequireFilePath(path, "writing a file");
  bool existing = false;
  struct stat info;
  const std::string target = WriteTarget(path, &existing, &info);
  static std::atomic<unsigned> counter{0};
  std::string temp;
  int fd = -1;
  for (int attempt = 0; fd < 0; ++attempt) {
    temp = TemporaryPath(target, counter.fetch_add(1));
    fd = open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0) {
      const int e = errno;
      if (e != EEXIST || attempt >= 100) {
        FailIo("cannot write '" + path + "': cannot create the temporary file '" + temp + "': " + SystemError(e));
      }
    }
  }
  // From here on, every failure removes the temporary file before throwing.
  auto fail = [&](const char* step, int e) {
    if (fd >= 0) close(fd);
    unlink(temp.c_str());
    FailIo("cannot write '" + path + "': " + step + " '" + temp + "' failed: " + SystemError(e));
  };
  if (existing) {
    // The replacement keeps the replaced file's permissions; its owner too where the process may
    // give it (root), else the file belongs to the writer, as any new file does.
    if (fchmod(fd, info.st_mode & 07777) != 0) fail("setting the permissions of", errno);
    if (fchown(fd, info.st_uid, info.st_gid) != 0) { /* not permitted: keep the writer as owner */ }
  }
  size_t written = 0;
  while (written < bytes.size()) {
    const ssize_t n = write(fd, bytes.data() + written, bytes.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) fail("writing", n < 0 ? errno : EIO);
    written += static_cast<size_t>(n);
  }
  if (fsync(fd) != 0) fail("fsync of", errno);
  const int closed = close(fd);
  fd = -1;
  if (closed != 0) fail("closing", errno);
  if (rename(temp.c_str(), target.c_str()) != 0) {
    const int e = errno;
    unlink(temp.c_str());
    FailIo("cannot write '" + path + "': renaming the temporary file '" + temp + "' over it failed: " +
           SystemError(e));
  }
  // Make the rename itself durable; a folder that cannot be opened or synced (some file systems)
  // does not make the write fail, since the file is complete either way.
  const int folder = open(ParentFolder(target).c_str(), O_RDONLY | O_CLOEXEC);
  if (folder >= 0) {
    fsync(folder);
    close(folder);
  }
}

}  // namespace lockstep
