/* Fuzzes the settings parser and the output path expander with random
 * values: every GPUTRACE_* variable set to random bytes, number-like
 * strings, %-sequences and very long strings. Invariants: every setting
 * ends within its documented range; the warnings buffer stays a valid list
 * of lines; an expanded path is NUL-terminated inside its buffer, or the
 * call fails with a reason. Built with ASan and UBSan (tests/tests.mk).
 *
 * The suite runs 20000 rounds; by hand: test_config_fuzz ROUNDS [SEED]. */
#include <stdint.h>
#include <stdlib.h>
#include "base/gt_config.h"
#include "hot/gt_stacks.h"
#include "unit.h"

static const char *const keys[] = {"GPUTRACE_OUTPUT", "GPUTRACE_STACK_DEPTH", "GPUTRACE_BUFFER_EVENTS",
                                   "GPUTRACE_GPU_TIMING", "GPUTRACE_PYTHON", "GPUTRACE_CAPTURE_RANGE",
                                   "GPUTRACE_CAPTURE_RANGE_END"};
#define NKEYS (sizeof(keys) / sizeof(keys[0]))
static char values[NKEYS][3000];
static int present[NKEYS];
static uint64_t rng_state;

static uint32_t rnd(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (uint32_t)(rng_state >> 11);
}

static const char *fuzz_getenv(const char *name)
{
    for (size_t i = 0; i < NKEYS; i++)
        if (strcmp(keys[i], name) == 0)
            return present[i] ? values[i] : NULL;
    return NULL;
}

static void random_value(char *out, size_t cap)
{
    static const char *const pieces[] = {"%p", "%n", "%h", "%r", "%%", "%", "%x", "/", "..", "-", "+", "0",
                                         "1", "64", "128", "129", "8192", "1048576", "4294967296",
                                         "99999999999999999999", "0x10", " ", "cupti", "off", "yes", "\xff",
                                         "é", ".db", "a", "nvtx:", "@", "*", "cudaProfilerApi", "repeat",
                                         "repeat:", "stop", "none"};
    size_t len = 0, target = rnd() % 8 == 0 ? rnd() % (cap - 1) : rnd() % 40;
    while (len < target) {
        const char *p;
        char byte[2] = {0, 0};
        if (rnd() % 3 == 0) {
            byte[0] = (char)(1 + rnd() % 255);
            p = byte;
        } else {
            p = pieces[rnd() % (sizeof(pieces) / sizeof(pieces[0]))];
        }
        size_t n = strlen(p);
        if (len + n >= cap - 1)
            break;
        memcpy(out + len, p, n);
        len += n;
    }
    out[len] = 0;
}

static void check_warnings(const char *w, int n, size_t cap)
{
    size_t off = 0;
    for (int i = 0; i < n; i++) {
        size_t l = strnlen(w + off, cap - off);
        CHECK(off + l < cap);
        if (off + l >= cap)
            return;
        off += l + 1;
    }
}

int main(int argc, char **argv)
{
    long rounds = argc > 1 ? atol(argv[1]) : 20000;
    rng_state = argc > 2 ? strtoull(argv[2], NULL, 10) : 0x9E3779B97F4A7C15ull;
    if (!rng_state)
        rng_state = 1;
    int bad_rounds = 0;
    for (long r = 0; r < rounds; r++) {
        for (size_t i = 0; i < NKEYS; i++) {
            present[i] = rnd() % 3 != 0;
            random_value(values[i], sizeof(values[i]));
        }
        struct gt_config c;
        char warnings[2048];
        int nw = gt_config_load(&c, fuzz_getenv, warnings, sizeof(warnings));
        int ok = nw >= 0 && nw <= (int)NKEYS && c.stack_depth >= 0 && c.stack_depth <= GT_STACK_MAX_DEPTH &&
                 c.buffer_events >= 64 && c.buffer_events <= (1u << 20) &&
                 (c.buffer_events & (c.buffer_events - 1)) == 0 && (c.gpu_timing == 0 || c.gpu_timing == 1) &&
                 (c.python == 0 || c.python == 1) && strnlen(c.output, sizeof(c.output)) < sizeof(c.output) &&
                 c.output[0];
        /* a capture range: a known kind and end, its names whole strings */
        const struct gt_capture_range *cr = &c.capture;
        ok = ok && cr->kind >= GT_CAPTURE_NONE && cr->kind <= GT_CAPTURE_NVTX && cr->end >= GT_CAPTURE_END_STOP &&
             cr->end <= GT_CAPTURE_END_NONE && cr->max >= 0 && (!cr->kind || c.standby) &&
             strnlen(cr->name, sizeof(cr->name)) < sizeof(cr->name) &&
             strnlen(cr->domain, sizeof(cr->domain)) < sizeof(cr->domain) &&
             (cr->kind != GT_CAPTURE_NVTX || cr->name[0]);
        if (!ok)
            bad_rounds++;
        check_warnings(warnings, nw, sizeof(warnings));

        char prog[64], host[64], rank[64];
        random_value(prog, sizeof(prog));
        random_value(host, sizeof(host));
        random_value(rank, sizeof(rank));
        struct gt_path_vars v = {(long)(rnd() % 4000000), prog, host, rank, (long)(rnd() % 100)};
        size_t caps[] = {1, 2, 16, 64, 1024};
        size_t cap = caps[rnd() % 5];
        char out[1024], err[128];
        memset(out, 'X', sizeof(out));
        int rc = gt_expand_output(c.output, &v, out, cap, err, sizeof(err));
        if (rc == 0) {
            size_t l = strnlen(out, cap);
            if (!(l < cap && l > 0))
                bad_rounds++;
        } else if (rc != -1 || !err[0] || strnlen(err, sizeof(err)) >= sizeof(err)) {
            bad_rounds++;
        }
    }
    CHECK(bad_rounds == 0);
    printf("test_config_fuzz: %ld rounds, %d broke an invariant\n", rounds, bad_rounds);
    return unit_report("test_config_fuzz");
}
