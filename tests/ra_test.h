/* Minimal test harness: CHECK records a failure and goes on; every program
 * ends with the line "N passed, N failed" and exits non-zero on a failure. */
#ifndef RA_TEST_H
#define RA_TEST_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static int ra_t_pass, ra_t_fail;

#define CHECK(cond, ...)                                                                                               \
    do {                                                                                                               \
        if (cond) {                                                                                                    \
            ra_t_pass++;                                                                                               \
        } else {                                                                                                       \
            ra_t_fail++;                                                                                               \
            fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond);                                            \
            fprintf(stderr, __VA_ARGS__);                                                                              \
            fputc('\n', stderr);                                                                                       \
        }                                                                                                              \
    } while (0)

#define CHECK_NEAR(a, b, tol, what)                                                                                    \
    CHECK(fabs((double)(a) - (double)(b)) <= (tol), "%s: %.9g vs %.9g (tol %g)", what, (double)(a), (double)(b),       \
          (double)(tol))

static int ra_test_finish(const char *name)
{
    printf("%s: %d passed, %d failed\n", name, ra_t_pass, ra_t_fail);
    printf("%d passed, %d failed\n", ra_t_pass, ra_t_fail);
    return ra_t_fail ? 1 : 0;
}

#endif
