// The C ABI's device functions (lockstep.h, "devices").
#include "bindings/native/c_api_internal.h"
#include "core/backend/device.h"

using lockstep::capi::Boundary;
using lockstep::capi::Fail;
using lockstep::capi::RequireNonNull;

lockstep_status lockstep_set_device(const char* name) {
  return Boundary(__func__, [&] {
    RequireNonNull(name, "name");
    const lockstep::Device device = lockstep::Device::Parse(name);  // bad names: invalid argument
    try {
      lockstep::SetCurrentDevice(device);
    } catch (const lockstep::Error& e) {
      Fail(LOCKSTEP_ERROR_UNAVAILABLE, e.what());
    }
  });
}

lockstep_status lockstep_get_device(char* buf, size_t size) {
  return Boundary(__func__, [&] {
    RequireNonNull(buf, "buf");
    lockstep::capi::CopyString(lockstep::CurrentKernels().device_name, buf, size);
  });
}

lockstep_status lockstep_cuda_devices(char* buf, size_t size, int* count) {
  return Boundary(__func__, [&] {
    RequireNonNull(buf, "buf");
    RequireNonNull(count, "count");
    const lockstep::CudaDeviceListing listing = lockstep::ListCudaDevices();
    std::string text;
    for (const std::string& line : listing.devices) text += line + "\n";
    if (listing.devices.empty()) text = listing.why_none;
    lockstep::capi::CopyString(text, buf, size);
    *count = static_cast<int>(listing.devices.size());
  });
}
