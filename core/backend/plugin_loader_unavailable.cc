// Builds without dynamic loading (WebAssembly, static executables): no device plugin can be loaded.
#include "core/backend/plugin_loader.h"

namespace lockstep {

const DevicePlugin* LoadCudaPlugin(std::string* why) {
  *why = "CUDA devices are not available in this build: it cannot load plugins (WebAssembly or a "
         "statically linked program); use the native shared library or the lockstep command";
  return nullptr;
}

}  // namespace lockstep
