// File I/O (core/io/files.h): atomic writes that never leave a partial file, keep a replaced
// file's permissions, write through symbolic links and refuse devices, FIFOs and folders; reads
// that take regular files only, without ever blocking on a FIFO.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/io/files.h"
#include "tests/unit/temp_folder.h"

namespace lockstep {
namespace {

bool Contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

std::vector<uint8_t> SomeBytes() {
  std::vector<uint8_t> bytes(300);
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<uint8_t>(i * 7);
  return bytes;
}

ErrorKind KindOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.kind();
  }
  FAIL("no lockstep::Error was thrown");
  return ErrorKind::kInternal;
}

std::string ReadError(const std::string& path, size_t max_bytes) {
  try {
    ReadWholeFile(path, max_bytes);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

std::string WriteError(const std::string& path, const std::vector<uint8_t>& bytes) {
  try {
    WriteFileAtomic(path, bytes);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST_CASE("WriteFileAtomic writes, replaces, and leaves no temporary file") {
  TempFolder folder;
  const std::string path = folder.path() + "/model.safetensors";
  const std::vector<uint8_t> first = SomeBytes();
  WriteFileAtomic(path, first);
  CHECK(ReadWholeFile(path, 1 << 20) == first);
  const std::vector<uint8_t> second = std::vector<uint8_t>(16, 9);
  WriteFileAtomic(path, second);
  CHECK(ReadWholeFile(path, 1 << 20) == second);
  WriteFileAtomic(path, {});
  CHECK(ReadWholeFile(path, 1 << 20).empty());
  CHECK(folder.Names() == std::vector<std::string>{"model.safetensors"});
}

TEST_CASE("a failed write names the path and the reason, and never leaves a partial file") {
  TempFolder folder;
  const std::vector<uint8_t> bytes = SomeBytes();
  // A folder that does not exist: nothing is created.
  const std::string missing = folder.path() + "/no-such-folder/model.safetensors";
  const std::string message = WriteError(missing, bytes);
  CHECK_MESSAGE(Contains(message, missing), message);
  CHECK_MESSAGE(Contains(message, "No such file or directory"), message);
  CHECK(folder.Names().empty());
  // The target is a folder: refused before anything is written, the folder stays.
  const std::string target = folder.path() + "/taken";
  REQUIRE(mkdir(target.c_str(), 0755) == 0);
  const std::string folder_message = WriteError(target, bytes);
  CHECK_MESSAGE(Contains(folder_message, "it is a folder"), folder_message);
  CHECK_MESSAGE(Contains(folder_message, target), folder_message);
  CHECK(folder.Names() == std::vector<std::string>{"taken"});
  struct stat info;
  CHECK((stat(target.c_str(), &info) == 0 && S_ISDIR(info.st_mode)));
  CHECK(Contains(WriteError("", bytes), "expected the path of a file"));
  CHECK(Contains(WriteError(folder.path() + "/", bytes), "expected the path of a file"));
#if !defined(__EMSCRIPTEN__)
  // A write that fails half-way (the file size limit stops it after 100 bytes): the existing
  // file keeps its old content and the temporary file is removed.
  const std::string kept = folder.path() + "/kept";
  WriteFileAtomic(kept, bytes);
  struct rlimit saved;
  REQUIRE(getrlimit(RLIMIT_FSIZE, &saved) == 0);
  void (*saved_handler)(int) = signal(SIGXFSZ, SIG_IGN);
  struct rlimit small = saved;
  small.rlim_cur = 100;
  REQUIRE(setrlimit(RLIMIT_FSIZE, &small) == 0);
  const std::string partial_message = WriteError(kept, std::vector<uint8_t>(1000, 1));
  setrlimit(RLIMIT_FSIZE, &saved);
  signal(SIGXFSZ, saved_handler);
  CHECK_MESSAGE(Contains(partial_message, "writing"), partial_message);
  CHECK_MESSAGE(Contains(partial_message, kept), partial_message);
  CHECK(ReadWholeFile(kept, 1 << 20) == bytes);
  CHECK(folder.Names().size() == 2);  // "taken" and "kept"
#endif
  // A file name too long for the suffix still gets a temporary file beside it.
  const std::string long_name = folder.path() + "/" + std::string(240, 'n');
  WriteFileAtomic(long_name, bytes);
  CHECK(ReadWholeFile(long_name, 1 << 20) == bytes);
}

TEST_CASE("ReadWholeFile refuses missing, oversized and non-regular files clearly") {
  TempFolder folder;
  const std::string missing = folder.path() + "/missing.safetensors";
  std::string message = ReadError(missing, 100);
  CHECK_MESSAGE(Contains(message, missing), message);
  CHECK_MESSAGE(Contains(message, "No such file or directory"), message);
  const std::string path = folder.path() + "/ten";
  WriteFileAtomic(path, std::vector<uint8_t>(10, 7));
  CHECK(ReadWholeFile(path, 10) == std::vector<uint8_t>(10, 7));
  message = ReadError(path, 9);
  CHECK_MESSAGE(Contains(message, "10 bytes, more than the limit of 9"), message);
  message = ReadError(folder.path(), 100);
  CHECK_MESSAGE(Contains(message, "folder"), message);
}

#if !defined(__EMSCRIPTEN__)
TEST_CASE("reads refuse FIFOs and devices at once, and say what they are") {
  TempFolder folder;
  const std::string fifo = folder.path() + "/pipe";
  REQUIRE(mkfifo(fifo.c_str(), 0600) == 0);
  const auto start = std::chrono::steady_clock::now();
  std::string message = ReadError(fifo, 100);  // no writer: a blocking open would hang here
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(5));
  CHECK_MESSAGE(Contains(message, "FIFO"), message);
  CHECK_MESSAGE(Contains(message, fifo), message);
  message = ReadError("/dev/zero", size_t{1} << 40);  // never ends: refused before any read
  CHECK_MESSAGE(Contains(message, "character device"), message);
  CHECK(KindOf([] { InputFile f("/dev/null"); }) == ErrorKind::kArgument);
  CHECK(KindOf([&] { InputFile f(folder.path() + "/missing"); }) == ErrorKind::kIo);
}

TEST_CASE("writes refuse devices and FIFOs, keep permissions and write through symbolic links") {
  TempFolder folder;
  // A device node or FIFO is never replaced by a regular file (as root, rename would do it).
  std::string message = WriteError("/dev/null", SomeBytes());
  CHECK_MESSAGE(Contains(message, "character device"), message);
  struct stat info;
  REQUIRE(stat("/dev/null", &info) == 0);
  CHECK(S_ISCHR(info.st_mode));
  CHECK_THROWS_AS(RequireWritableFile("/dev/null"), Error);
  const std::string fifo = folder.path() + "/pipe";
  REQUIRE(mkfifo(fifo.c_str(), 0600) == 0);
  message = WriteError(fifo, SomeBytes());
  CHECK_MESSAGE(Contains(message, "FIFO"), message);
  REQUIRE(lstat(fifo.c_str(), &info) == 0);
  CHECK(S_ISFIFO(info.st_mode));
  CHECK(KindOf([] { RequireWritableFile(""); }) == ErrorKind::kArgument);

  // A replaced file keeps its permission bits.
  const std::string path = folder.path() + "/model.safetensors";
  WriteFileAtomic(path, {1, 2, 3});
  REQUIRE(chmod(path.c_str(), 0640) == 0);
  WriteFileAtomic(path, SomeBytes());
  REQUIRE(stat(path.c_str(), &info) == 0);
  CHECK((info.st_mode & 07777) == 0640);
  CHECK(ReadWholeFile(path, 1 << 20) == SomeBytes());

  // A symbolic link stays a link; the file it names gets the bytes.
  const std::string link = folder.path() + "/latest";
  REQUIRE(symlink("model.safetensors", link.c_str()) == 0);
  WriteFileAtomic(link, {4, 5});
  REQUIRE(lstat(link.c_str(), &info) == 0);
  CHECK(S_ISLNK(info.st_mode));
  CHECK(ReadWholeFile(path, 1 << 20) == std::vector<uint8_t>{4, 5});
  // A link to a device is refused, naming the link's target.
  const std::string to_null = folder.path() + "/null-link";
  REQUIRE(symlink("/dev/null", to_null.c_str()) == 0);
  message = WriteError(to_null, SomeBytes());
  CHECK_MESSAGE(Contains(message, "/dev/null"), message);
  CHECK_MESSAGE(Contains(message, "character device"), message);
  // A dangling link is refused rather than guessed at.
  const std::string dangling = folder.path() + "/dangling";
  REQUIRE(symlink("no-such-file", dangling.c_str()) == 0);
  CHECK(Contains(WriteError(dangling, SomeBytes()), "symbolic link"));
  CHECK(folder.Names().size() == 5);  // pipe, model, latest, null-link, dangling: no temporary file
}

TEST_CASE("InputFile reads exact ranges, stops when cancelled, and names a file that ended early") {
  TempFolder folder;
  const std::string path = folder.path() + "/data";
  WriteFileAtomic(path, SomeBytes());
  const InputFile file(path);
  CHECK(file.size() == 300);
  uint8_t part[10];
  file.ReadAt(100, part, 10);
  CHECK(part[0] == static_cast<uint8_t>(700));
  CHECK_THROWS_WITH_AS(file.ReadAt(295, part, 10), doctest::Contains("ends after 300 bytes"), Error);
  CHECK(KindOf([&] { file.ReadAt(0, part, 10, [] { return true; }); }) == ErrorKind::kCancelled);
}
#endif

}  // namespace
}  // namespace lockstep
