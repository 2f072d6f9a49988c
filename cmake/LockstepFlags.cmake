# Compiler flags for every C and C++ file of every target. The numerical contract depends on them:
# -ffp-contract=off stops the compiler from fusing a*b+c into FMA (docs/numerics.md, rule 2), and
# nothing here may enable fast-math. tools/contract-lint checks compile_commands.json for both.
# -fno-math-errno only drops errno bookkeeping (sqrt becomes the bare IEEE instruction); it changes no
# value.
# (C and C++ only: the CUDA plugin gets nvcc's equivalents in cuda/CMakeLists.txt.)
set(lockstep_c_cxx "$<COMPILE_LANGUAGE:C,CXX>")
add_compile_options("$<${lockstep_c_cxx}:-ffp-contract=off;-fno-fast-math;-fno-math-errno;-Wall;-Wextra>")
if(LOCKSTEP_WERROR)
  add_compile_options("$<${lockstep_c_cxx}:-Werror>")
endif()

if(LOCKSTEP_SANITIZE)
  add_compile_options("$<${lockstep_c_cxx}:-fsanitize=address,undefined;-fno-sanitize-recover=undefined;-fno-omit-frame-pointer>")
  add_link_options(-fsanitize=address,undefined)
  # New tensor storage filled with a NaN pattern (core/tensor.cc): an element a kernel leaves
  # unwritten shows up in the battery's and the examples' hashes.
  add_compile_definitions(LOCKSTEP_POISON_NEW_TENSORS=1)
endif()

if(EMSCRIPTEN)
  if(LOCKSTEP_WASM_SIMD)
    add_compile_options(-msimd128)
    set(LOCKSTEP_PLATFORM "wasm-simd128")
  else()
    set(LOCKSTEP_PLATFORM "wasm-scalar")
  endif()
  # C++ exceptions carry lockstep::Error to the caller (and, through the bindings, to JavaScript
  # as an Error); WebAssembly's native exception handling is the cheap form (Node 17+, current
  # browsers). With pthreads it needs cmake/LockstepWasmThreads.cmake.
  add_compile_options(-fwasm-exceptions)
  add_link_options(-fwasm-exceptions)
  # Programs (tests, tools, examples) run under Node: no fetch of the .wasm (Node 18+ has a global
  # fetch that cannot read files), synchronous compilation, the host's files, enough memory for the
  # test data. The npm package's module (bindings/wasm) sets LOCKSTEP_JS_LIBRARY and links its own
  # way.
  set(lockstep_node_program_flags -sSINGLE_FILE=1 -sWASM_ASYNC_COMPILATION=0 -sNODERAWFS=1 -sEXIT_RUNTIME=1)
  # Programs link at -O1 (the last -O on emcc's line wins): their objects are compiled at -O3 all
  # the same, but Binaryen's whole-module -O3 pass at link took 5-7x as long (8 s against 1.2 s for
  # the battery, about four minutes of CI's seven builds of programs) and changed no time that a
  # test measures (the battery 1.53 s against 1.47 s in Node). Binaryen keeps IEEE semantics, so
  # the bits are the same either way; the npm package's modules, which users run, keep -O3.
  list(APPEND lockstep_node_program_flags -O1)
  if(LOCKSTEP_WASM_THREADS)
    # Kernel threads are pthreads: Web Workers (worker_threads in Node) sharing the module's memory.
    # Every object needs atomics and shared memory, so the flag goes on every compile and link.
    add_compile_options(-pthread)
    add_link_options(-pthread)
    string(APPEND LOCKSTEP_PLATFORM "-threads")
    # Programs run main() on a worker, so the JavaScript thread stays free to start a worker for
    # each new pthread (a main() that blocked there would wait for workers that never load).
    list(APPEND lockstep_node_program_flags -sPROXY_TO_PTHREAD=1)
  endif()
  add_link_options(-sALLOW_MEMORY_GROWTH=1
                   "$<$<NOT:$<BOOL:$<TARGET_PROPERTY:LOCKSTEP_JS_LIBRARY>>>:${lockstep_node_program_flags}>")
elseif(CMAKE_SYSTEM_PROCESSOR MATCHES "aarch64|arm64")
  set(LOCKSTEP_PLATFORM "aarch64")
elseif(CMAKE_SYSTEM_PROCESSOR MATCHES "s390x")
  set(LOCKSTEP_PLATFORM "s390x")
elseif(CMAKE_SYSTEM_PROCESSOR MATCHES "x86_64|AMD64|amd64")
  set(LOCKSTEP_PLATFORM "x86_64")
else()
  set(LOCKSTEP_PLATFORM "${CMAKE_SYSTEM_PROCESSOR}")
endif()
add_compile_definitions(LOCKSTEP_PLATFORM="${LOCKSTEP_PLATFORM}")
