// A fresh folder under $TMPDIR (or /tmp) for a test, removed with what it holds (one level deep).
#ifndef LOCKSTEP_TESTS_UNIT_TEMP_FOLDER_H_
#define LOCKSTEP_TESTS_UNIT_TEMP_FOLDER_H_

#include <doctest/doctest.h>
#include <dirent.h>
#include <stdlib.h>
#include <unistd.h>

#include <string>
#include <vector>

namespace lockstep {

class TempFolder {
 public:
  TempFolder() {
    const char* base = getenv("TMPDIR");
    std::string pattern = std::string(base && *base ? base : "/tmp") + "/lockstep_test_XXXXXX";
    std::vector<char> buffer(pattern.begin(), pattern.end());
    buffer.push_back('\0');
    REQUIRE(mkdtemp(buffer.data()) != nullptr);
    path_ = buffer.data();
  }
  ~TempFolder() {
    for (const std::string& name : Names()) {
      const std::string p = path_ + "/" + name;
      if (rmdir(p.c_str()) != 0) unlink(p.c_str());
    }
    rmdir(path_.c_str());
  }
  const std::string& path() const { return path_; }
  std::vector<std::string> Names() const {
    std::vector<std::string> names;
    if (DIR* dir = opendir(path_.c_str())) {
      while (const dirent* entry = readdir(dir)) {
        const std::string name = entry->d_name;
        if (name != "." && name != "..") names.push_back(name);
      }
      closedir(dir);
    }
    return names;
  }

 private:
  std::string path_;
};

}  // namespace lockstep

#endif  // LOCKSTEP_TESTS_UNIT_TEMP_FOLDER_H_
