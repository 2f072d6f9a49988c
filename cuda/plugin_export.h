// The two functions every lockstep device plugin exports (core/backend/kernel_table.h).
#ifndef LOCKSTEP_CUDA_PLUGIN_EXPORT_H_
#define LOCKSTEP_CUDA_PLUGIN_EXPORT_H_

#include <stddef.h>

#include "core/backend/kernel_table.h"

#define LOCKSTEP_PLUGIN_API extern "C" __attribute__((visibility("default")))

LOCKSTEP_PLUGIN_API const lockstep::backend::KernelTable* lockstep_plugin_kernel_table_v1(
    int index, char* why, size_t why_bytes);
LOCKSTEP_PLUGIN_API int lockstep_plugin_list_devices_v1(char* names, size_t names_bytes, char* why,
                                                        size_t why_bytes);

#endif  // LOCKSTEP_CUDA_PLUGIN_EXPORT_H_
