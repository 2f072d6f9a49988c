// Finds and opens the CUDA plugin (a shared library) at run time. Native builds use dlopen
// (plugin_loader_dlopen.cc); WebAssembly builds link plugin_loader_unavailable.cc, which says
// that plugins cannot be loaded there. Chosen by the build, so no #ifdef in the core.
#ifndef LOCKSTEP_CORE_BACKEND_PLUGIN_LOADER_H_
#define LOCKSTEP_CORE_BACKEND_PLUGIN_LOADER_H_

#include <string>

#include "core/backend/kernel_table.h"

namespace lockstep {

struct DevicePlugin {
  std::string path;  // the file that was opened
  backend::PluginEntry kernel_table = nullptr;
  backend::PluginListDevices list_devices = nullptr;
};

// Loads the CUDA plugin once per process: $LOCKSTEP_CUDA_PLUGIN when set (that file only), else
// liblockstep_cuda.so next to the library or program holding this code, else the dynamic
// loader's search path. Null with every place tried and why in *why when none loads.
const DevicePlugin* LoadCudaPlugin(std::string* why);

}  // namespace lockstep

#endif  // LOCKSTEP_CORE_BACKEND_PLUGIN_LOADER_H_
