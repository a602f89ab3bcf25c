/* gt_progress.c: the progress line (gt_progress.h). Nothing is printed
 * before 2 s so quick commands stay quiet; on a terminal the line is
 * redrawn with \r and erased at the end, elsewhere (a log) plain lines. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "base/gt_progress.h"

int gt_progress_quiet;
uint64_t gt_progress_rows;

static const char *gt_what;
static uint64_t gt_total;
static double gt_t0, gt_last, gt_after;
static int gt_active, gt_shown, gt_tty;

static void gt_progress_draw(void);

static double gt_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

void gt_progress_begin(const char *what, uint64_t total)
{
    gt_what = what;
    gt_total = total;
    gt_progress_rows = 0;
    gt_t0 = gt_last = gt_now();
    gt_active = !gt_progress_quiet;
    gt_shown = 0;
    gt_tty = isatty(2);
    /* GPUTRACE_PROGRESS_AFTER: seconds before the line shows (tests set 0) */
    const char *after = getenv("GPUTRACE_PROGRESS_AFTER");
    gt_after = after && *after ? atof(after) : 2.0;
}

void gt_progress_update(void)
{
    static int busy; /* one thread draws at a time; the other skips */
    if (!gt_active || __atomic_exchange_n(&busy, 1, __ATOMIC_ACQUIRE))
        return;
    gt_progress_draw();
    __atomic_store_n(&busy, 0, __ATOMIC_RELEASE);
}

static void gt_progress_draw(void)
{
    double now = gt_now();
    if (now - gt_t0 < gt_after || (gt_shown && now - gt_last < (gt_tty ? 0.25 : 5.0)))
        return;
    gt_last = now;
    gt_shown = 1;
    uint64_t rows = __atomic_load_n(&gt_progress_rows, __ATOMIC_RELAXED);
    double rate = rows / (now - gt_t0);
    char pct[16] = "";
    if (gt_total) {
        double p = 100.0 * rows / gt_total;
        snprintf(pct, sizeof(pct), "%3.0f%%, ", p > 99 ? 99 : p);
    }
    fprintf(stderr, "%sgputrace %s: %s%.1fM rows read, %.2fM rows/s%s", gt_tty ? "\r" : "", gt_what, pct,
            rows / 1e6, rate / 1e6, gt_tty ? "\033[K" : "\n");
    fflush(stderr);
}

void gt_progress_end(void)
{
    if (gt_active && gt_shown && gt_tty)
        fputs("\r\033[K", stderr);
    gt_active = 0;
}
