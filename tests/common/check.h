/* check.h — the C unit tests' CHECK: a failed condition is reported with its file, line, text
 * and a printf-style explanation, counted in `failures`, and the test goes on (every invariant
 * checked, not only the first). A test's main returns failures != 0. Header-only: each test is
 * one program. */
#ifndef CONVGPU_TEST_CHECK_H
#define CONVGPU_TEST_CHECK_H

#include <stdio.h>

static int failures;
#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "%s:%d: FAIL %s: ", __FILE__, __LINE__, #cond);                        \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fprintf(stderr, "\n");                                                                 \
            failures++;                                                                            \
        }                                                                                          \
    } while (0)

#endif
