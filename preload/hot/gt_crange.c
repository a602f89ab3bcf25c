/* gt_crange.c: capture ranges (gt_crange.h).
 *
 * One process-wide state word: waiting for a range, a range open (its
 * window recording), closing, or done (no more ranges: capture-range-end
 * stop, or repeat:N reached). Its changes are compare-and-swaps, so two
 * threads starting a range at once open one window, and two stops close it
 * once. A push/pop range is closed by the pop that matches it on the thread
 * that pushed it (nesting counted per thread, in its domain); a start/end
 * range by its id, on whichever thread ends it. None of this runs while no
 * rule is set: the profiler hooks are called a handful of times a run, and
 * the NVTX callbacks test gt_crange_nvtx_on first. */
#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <string.h>

#include "base/gt_base.h"
#include "hot/gt_crange.h"
#include "hot/gt_nvtx.h"

enum { GT_CR_WAITING, GT_CR_OPEN, GT_CR_CLOSING, GT_CR_DONE };

_Atomic int gt_crange_nvtx_on;
static struct gt_capture_range gt_cr_rule;
static int (*gt_cr_open)(const char *why);
static void (*gt_cr_close)(void);
static char gt_cr_why[320];

static _Atomic int gt_cr_state;
static _Atomic long gt_cr_ranges;      /* ranges recorded whole */
static _Atomic(uint64_t) gt_cr_id;     /* the start/end range recording (0: a push/pop one) */
static GT_TLS int gt_cr_owner;         /* this thread pushed the range recording */
static GT_TLS int gt_cr_depth;         /* pushes inside it on this thread, in its domain */
static GT_TLS uint32_t gt_cr_domain;

void gt_crange_configure(const struct gt_capture_range *rule, int (*open)(const char *why), void (*close)(void))
{
    gt_cr_rule = *rule;
    gt_cr_open = open;
    gt_cr_close = close;
    if (rule->kind == GT_CAPTURE_PROFILER)
        snprintf(gt_cr_why, sizeof(gt_cr_why), "capture range cudaProfilerApi");
    else
        snprintf(gt_cr_why, sizeof(gt_cr_why), "capture range nvtx:%s%s%s", rule->name, rule->domain[0] ? "@" : "",
                 rule->domain);
    atomic_store(&gt_cr_state, GT_CR_WAITING);
    atomic_store(&gt_crange_nvtx_on, rule->kind == GT_CAPTURE_NVTX && open && close);
}

void gt_crange_reset(void)
{
    atomic_store(&gt_crange_nvtx_on, 0);
    gt_cr_rule.kind = GT_CAPTURE_NONE;
    atomic_store(&gt_cr_state, GT_CR_WAITING);
    atomic_store(&gt_cr_ranges, 0);
    atomic_store(&gt_cr_id, 0);
    gt_cr_owner = 0; /* the forking thread's; other threads did not come across */
}

/* Opens the window for a range starting now; 1 if it did. */
static int gt_cr_begin(void)
{
    int waiting = GT_CR_WAITING;
    if (!atomic_compare_exchange_strong(&gt_cr_state, &waiting, GT_CR_OPEN))
        return 0;
    int saved = errno, was = gt_tls_busy;
    gt_tls_busy = 1; /* what opening the window calls (CUPTI) is not the program's */
    int ok = gt_cr_open(gt_cr_why) == 0;
    gt_tls_busy = was;
    errno = saved;
    if (!ok)
        atomic_store(&gt_cr_state, GT_CR_WAITING);
    return ok;
}

/* The range recording ends now (the caller won the OPEN -> CLOSING swap). */
static void gt_cr_finish(void)
{
    int saved = errno, was = gt_tls_busy;
    gt_tls_busy = 1;
    gt_cr_close();
    gt_tls_busy = was;
    errno = saved;
    long n = atomic_fetch_add(&gt_cr_ranges, 1) + 1;
    int more = gt_cr_rule.end == GT_CAPTURE_END_REPEAT && (!gt_cr_rule.max || n < gt_cr_rule.max);
    if (!more)
        atomic_store(&gt_crange_nvtx_on, 0);
    atomic_store(&gt_cr_state, more ? GT_CR_WAITING : GT_CR_DONE);
}

/* The range recording ends, unless capture-range-end is none (then its
 * window records to the end of the process). */
static void gt_cr_end_now(void)
{
    if (gt_cr_rule.end == GT_CAPTURE_END_NONE) {
        atomic_store(&gt_crange_nvtx_on, 0);
        return;
    }
    int open = GT_CR_OPEN;
    if (atomic_compare_exchange_strong(&gt_cr_state, &open, GT_CR_CLOSING))
        gt_cr_finish();
}

void gt_crange_profiler(int start)
{
    if (gt_cr_rule.kind != GT_CAPTURE_PROFILER || !gt_cr_open)
        return;
    if (start)
        gt_cr_begin(); /* a start inside a range changes nothing, as in CUDA */
    else
        gt_cr_end_now();
}

static int gt_cr_domain_matches(uint32_t domain)
{
    const char *want = gt_cr_rule.domain;
    if (!want[0])
        return domain == 0;
    if (strcmp(want, "*") == 0)
        return 1;
    const char *bytes;
    int n = domain ? gt_nvtx_string(domain, &bytes) : -1;
    return n >= 0 && (size_t)n == strlen(want) && memcmp(bytes, want, (size_t)n) == 0;
}

/* Called before the NVTX callback's guard has saved errno: keeps it. */
static int gt_cr_matches(uint32_t domain, const char *name, size_t len)
{
    char buf[256];
    if (!name || len >= sizeof(buf) || !gt_cr_domain_matches(domain))
        return 0;
    memcpy(buf, name, len);
    buf[len] = 0;
    int saved = errno;
    int hit = fnmatch(gt_cr_rule.name, buf, 0) == 0;
    errno = saved;
    return hit;
}

void gt_crange_push(uint32_t domain, const char *name, size_t name_len)
{
    if (gt_cr_owner) {
        if (domain == gt_cr_domain)
            gt_cr_depth++;
        return;
    }
    if (atomic_load_explicit(&gt_cr_state, memory_order_relaxed) != GT_CR_WAITING ||
        !gt_cr_matches(domain, name, name_len))
        return;
    if (gt_cr_begin()) {
        gt_cr_owner = 1;
        gt_cr_depth = 0;
        gt_cr_domain = domain;
    }
}

void gt_crange_pop(uint32_t domain)
{
    if (!gt_cr_owner || domain != gt_cr_domain)
        return;
    if (gt_cr_depth > 0) {
        gt_cr_depth--;
        return;
    }
    gt_cr_owner = 0;
    gt_cr_end_now();
}

void gt_crange_start(uint64_t id, uint32_t domain, const char *name, size_t name_len)
{
    if (!id || atomic_load_explicit(&gt_cr_state, memory_order_relaxed) != GT_CR_WAITING ||
        !gt_cr_matches(domain, name, name_len))
        return;
    if (gt_cr_begin())
        atomic_store(&gt_cr_id, id);
}

void gt_crange_end(uint64_t id)
{
    uint64_t want = id;
    if (id && atomic_load_explicit(&gt_cr_id, memory_order_relaxed) == id &&
        atomic_compare_exchange_strong(&gt_cr_id, &want, 0))
        gt_cr_end_now();
}
