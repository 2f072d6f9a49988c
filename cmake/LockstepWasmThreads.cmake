# The WebAssembly threads build (LOCKSTEP_WASM_THREADS; docs/wasm-threads.md): every program and
# the npm module link lockstep_wasm_unwind, the landing-pad runtime of WebAssembly exceptions
# built to match this compiler.
#
# Why: Debian 12's Emscripten 3.1.6 ships a runtime (libunwind's Unwind-wasm.c) that keeps the
# landing-pad context per thread (thread_local), but its compiler, LLVM 14, writes that context
# at one fixed address. Without pthreads both are the same variable; with pthreads the compiler's
# code and the runtime look at different memory, so no `catch` ever matches and every
# lockstep::Error escapes as an uncaught WebAssembly exception. Compiling Emscripten's own
# Unwind-wasm.c (from the installed emscripten package) with thread_local removed gives the
# context the compiler expects. One context for all threads is what LLVM 14's own runtime had: it
# is safe as long as only one thread at a time unwinds, and in lockstep only the calling thread
# throws (kernel tasks on pool threads never do).
if(NOT EMSCRIPTEN OR NOT LOCKSTEP_WASM_THREADS)
  return()
endif()
set(lockstep_libunwind "${EMSCRIPTEN_ROOT_PATH}/system/lib/libunwind")
if(NOT EXISTS "${lockstep_libunwind}/src/Unwind-wasm.c")
  message(FATAL_ERROR "LOCKSTEP_WASM_THREADS: ${lockstep_libunwind}/src/Unwind-wasm.c not found (the emscripten package's sources)")
endif()
add_library(lockstep_wasm_unwind STATIC "${lockstep_libunwind}/src/Unwind-wasm.c")
target_include_directories(lockstep_wasm_unwind SYSTEM PRIVATE "${lockstep_libunwind}/include")
# The flags Emscripten builds it with (tools/system_libs.py), and _Thread_local (what
# thread_local expands to) defined away.
target_compile_definitions(lockstep_wasm_unwind PRIVATE NDEBUG _LIBUNWIND_DISABLE_VISIBILITY_ANNOTATIONS
                                                        __USING_WASM_EXCEPTIONS__ _Thread_local=)
target_compile_options(lockstep_wasm_unwind PRIVATE -Oz)
# Linked before Emscripten's own libunwind, whose copy is then never pulled in.
link_libraries(lockstep_wasm_unwind)
