/* unit.h: the smallest possible assertion kit for the C unit tests. */
#ifndef GT_UNIT_H
#define GT_UNIT_H
#include <stdio.h>
#include <string.h>

static int unit_passed, unit_failed;

#define CHECK(cond)                                                                \
    do {                                                                           \
        if (cond) {                                                                \
            unit_passed++;                                                         \
        } else {                                                                   \
            unit_failed++;                                                         \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
        }                                                                          \
    } while (0)

#define CHECK_STR(a, b)                                                                       \
    do {                                                                                      \
        const char *a_ = (a), *b_ = (b);                                                      \
        if (a_ && b_ && strcmp(a_, b_) == 0) {                                                \
            unit_passed++;                                                                    \
        } else {                                                                              \
            unit_failed++;                                                                    \
            fprintf(stderr, "%s:%d: '%s' != '%s'\n", __FILE__, __LINE__, a_ ? a_ : "(null)", \
                    b_ ? b_ : "(null)");                                                      \
        }                                                                                     \
    } while (0)

static int unit_report(const char *name)
{
    printf("%s: %d passed, %d failed\n", name, unit_passed, unit_failed);
    return unit_failed ? 1 : 0;
}
#endif
