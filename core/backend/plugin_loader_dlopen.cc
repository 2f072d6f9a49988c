// dlopen-based plugin loading for native builds (see plugin_loader.h).
#include <dlfcn.h>
#include <stdlib.h>
#include <unistd.h>

#include <mutex>
#include <vector>

#include "core/backend/plugin_loader.h"

namespace lockstep {
namespace {

constexpr const char* kPluginFile = "liblockstep_cuda.so";

std::string DirectoryOf(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? std::string(".") : path.substr(0, slash);
}

// Where to look, in order, when $LOCKSTEP_CUDA_PLUGIN is not set.
std::vector<std::string> Candidates() {
  std::vector<std::string> paths;
  Dl_info info;
  if (dladdr(reinterpret_cast<void*>(&LoadCudaPlugin), &info) != 0 && info.dli_fname != nullptr) {
    paths.push_back(DirectoryOf(info.dli_fname) + "/" + kPluginFile);
  }
  char exe[4096];
  const ssize_t length = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (length > 0) {
    exe[length] = '\0';
    const std::string beside = DirectoryOf(exe) + "/" + kPluginFile;
    if (paths.empty() || paths[0] != beside) paths.push_back(beside);
  }
  paths.push_back(kPluginFile);  // LD_LIBRARY_PATH, the cache, the default directories
  return paths;
}

bool TryOpen(const std::string& path, DevicePlugin* plugin, std::string* why) {
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* error = dlerror();
    *why += "\n  " + path + ": " + (error != nullptr ? error : "cannot be opened");
    return false;
  }
  plugin->kernel_table =
      reinterpret_cast<backend::PluginEntry>(dlsym(handle, backend::kPluginEntryName));
  plugin->list_devices =
      reinterpret_cast<backend::PluginListDevices>(dlsym(handle, backend::kPluginListName));
  if (plugin->kernel_table == nullptr || plugin->list_devices == nullptr) {
    *why += "\n  " + path + ": not a lockstep device plugin (no " + backend::kPluginEntryName + ")";
    dlclose(handle);
    return false;
  }
  plugin->path = path;
  return true;  // kept open for the life of the process
}

}  // namespace

const DevicePlugin* LoadCudaPlugin(std::string* why) {
  static std::mutex mutex;
  static DevicePlugin plugin;
  static bool loaded = false;
  static std::string failure;
  std::lock_guard<std::mutex> lock(mutex);
  if (!loaded && failure.empty()) {
    std::string tried;
    const char* forced = getenv("LOCKSTEP_CUDA_PLUGIN");
    if (forced != nullptr && forced[0] != '\0') {
      loaded = TryOpen(forced, &plugin, &tried);
    } else {
      for (const std::string& path : Candidates()) {
        if ((loaded = TryOpen(path, &plugin, &tried))) break;
      }
    }
    if (!loaded) {
      failure = "the CUDA plugin (" + std::string(kPluginFile) +
                ") was not found or did not load; tried:" + tried +
                "\n  (build it where nvcc is installed, or set LOCKSTEP_CUDA_PLUGIN to its path)";
    }
  }
  if (!loaded) {
    *why = failure;
    return nullptr;
  }
  return &plugin;
}

}  // namespace lockstep
