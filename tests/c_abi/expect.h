/* The checks shared by the C ABI's C tests: EXPECT counts a failure and goes on, REQUIRE_OK stops
 * the program. Each test includes this once and ends with `return failures ? 1 : 0` or the like. */
#ifndef LOCKSTEP_TESTS_C_ABI_EXPECT_H_
#define LOCKSTEP_TESTS_C_ABI_EXPECT_H_

#include <lockstep/lockstep.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures = 0;

/* EXPECT(call, status, text): the call returns status and lockstep_last_error() contains text. */
#define EXPECT(call, want, text)                                                                  \
  do {                                                                                            \
    const lockstep_status got_ = (call);                                                          \
    const char* error_ = lockstep_last_error();                                                   \
    if (got_ != (want) || strstr(error_, (text)) == NULL) {                                       \
      printf("FAIL %s:%d: %s -> %s (want %s): %s\n", __FILE__, __LINE__, #call,                   \
             lockstep_status_name(got_), lockstep_status_name(want), error_);                     \
      ++failures;                                                                                 \
    } else {                                                                                      \
      printf("ok: %s -> %s\n", #call, lockstep_status_name(got_));                                \
    }                                                                                             \
  } while (0)
#define REQUIRE_OK(call)                                                                          \
  do {                                                                                            \
    const lockstep_status s_ = (call);                                                            \
    if (s_ != LOCKSTEP_OK) {                                                                      \
      printf("FAIL %s:%d: %s -> %s: %s\n", __FILE__, __LINE__, #call, lockstep_status_name(s_),    \
             lockstep_last_error());                                                              \
      exit(1);                                                                                    \
    }                                                                                             \
  } while (0)

#endif /* LOCKSTEP_TESTS_C_ABI_EXPECT_H_ */
