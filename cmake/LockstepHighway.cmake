# Highway: the headers and the small runtime (target detection, dispatch tables) are built from
# Debian's own source package of the installed libhwy-dev, which tools/setup.sh fetches into
# .deps/highway. Every target (x86, AArch64, WebAssembly) then uses identical Highway code.
set(LOCKSTEP_HIGHWAY_DIR "${PROJECT_SOURCE_DIR}/.deps/highway" CACHE PATH "Highway source tree")
if(NOT EXISTS "${LOCKSTEP_HIGHWAY_DIR}/hwy/targets.cc")
  message(FATAL_ERROR "Highway sources not found in ${LOCKSTEP_HIGHWAY_DIR}: run tools/setup.sh first")
endif()

add_library(lockstep_hwy STATIC
  ${LOCKSTEP_HIGHWAY_DIR}/hwy/targets.cc
  ${LOCKSTEP_HIGHWAY_DIR}/hwy/per_target.cc)
target_include_directories(lockstep_hwy SYSTEM PUBLIC $<BUILD_INTERFACE:${LOCKSTEP_HIGHWAY_DIR}>)
set_target_properties(lockstep_hwy PROPERTIES POSITION_INDEPENDENT_CODE ON)

# The target policy: every target the compiler can reach is built into one binary and chosen at
# run time; GCC 12 marks EMU128 broken, but it builds and gives the same bits, and it is the
# portable fallback, so it is re-enabled. AVX3_DL is included for the newest x86 chips.
# SVE_256 (Highway's SVE target specialised for 256-bit vectors) is disabled: under qemu it gave
# wrong float64 results in the elementary functions (log of large inputs, GELU of subnormals) while
# the generic SVE and SVE2 targets, NEON and EMU128 were correct; 256-bit SVE hardware runs the
# generic SVE/SVE2 code instead, which tools/check-matrix tests at 256 bits.
target_compile_definitions(lockstep_hwy PUBLIC HWY_COMPILE_ALL_ATTAINABLE HWY_BROKEN_EMU128=0
                                               HWY_WANT_AVX3_DL=1 HWY_DISABLED_TARGETS=HWY_SVE_256)
# WebAssembly cannot choose at run time: one module per target, each kernel family compiled for
# that target only (simd/CMakeLists.txt sets HWY_COMPILE_ONLY_STATIC per source).

if(LOCKSTEP_SANITIZE AND CMAKE_SYSTEM_PROCESSOR MATCHES "x86_64|AMD64")
  # The sanitizer build instruments one target, SSE4 (any x86-64 of the last decade), instead of
  # all six: instrumenting every target multiplies compile time several-fold (the elementary
  # functions alone took over ten minutes). The release build tests every target.
  target_compile_definitions(lockstep_hwy PUBLIC HWY_COMPILE_ONLY_STATIC=1)
  target_compile_options(lockstep_hwy PUBLIC -msse4.2 -mpclmul -maes)
endif()
