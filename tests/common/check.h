/* check.h — the C unit tests' one assertion: CHECK(cond) or CHECK(cond, fmt, ...). A failed
 * condition is reported with its file, line, text and, when given, a printf-style explanation,
 * counted in `failures`, and the test goes on (every invariant checked, not only the first). A
 * test's main returns failures != 0. Header-only: each test is one program.
 *
 * The explanation is optional without an empty format string (which -Wformat refuses): the
 * argument count picks CHECK_BARE_ or CHECK_SAYS_ (up to 30 arguments after the format). */
#ifndef CONVGPU_TEST_CHECK_H
#define CONVGPU_TEST_CHECK_H

#include <stdio.h>

static int failures;

#define CHECK_BARE_(cond)                                                                          \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "%s:%d: FAIL %s\n", __FILE__, __LINE__, #cond);                        \
            failures++;                                                                            \
        }                                                                                          \
    } while (0)
#define CHECK_SAYS_(cond, ...)                                                                     \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "%s:%d: FAIL %s: ", __FILE__, __LINE__, #cond);                        \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fprintf(stderr, "\n");                                                                 \
            failures++;                                                                            \
        }                                                                                          \
    } while (0)
#define CHECK_PICK_(_1, _2, _3, _4, _5, _6, _7, _8, _9, _10, _11, _12, _13, _14, _15, _16, _17,     \
                    _18, _19, _20, _21, _22, _23, _24, _25, _26, _27, _28, _29, _30, _31, _32,     \
                    name, ...)                                                                     \
    name
#define CHECK(...)                                                                                 \
    CHECK_PICK_(__VA_ARGS__, CHECK_SAYS_, CHECK_SAYS_, CHECK_SAYS_, CHECK_SAYS_, CHECK_SAYS_,      \
                CHECK_SAYS_, CHECK_SAYS_, CHECK_SAYS_, CHECK_SAYS_, CHECK_SAYS_, CHECK_SAYS_,      \
                CHECK_SAYS_, CHECK_SAYS_, CHECK_SAYS_, CHECK_SAYS_, CHECK_SAYS_, CHECK_SAYS_,      \
                CHECK_SAYS_, CHECK_SAYS_, CHECK_SAYS_, CHECK_SAYS_, CHECK_SAYS_, CHECK_SAYS_,      \
                CHECK_SAYS_, CHECK_SAYS_, CHECK_SAYS_, CHECK_SAYS_, CHECK_SAYS_, CHECK_SAYS_,      \
                CHECK_SAYS_, CHECK_SAYS_, CHECK_BARE_, unused)(__VA_ARGS__)

#endif
