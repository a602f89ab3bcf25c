/* gt_flight.c: the flight recorder (gt_flight.h): the rings' sizes and
 * overwriting, what a window opened from them says in meta, the calls in
 * flight at a window's end, and the `gt-flight` thread: the hang rule's
 * watcher and the writer of a crash's window, woken by the fatal-signal
 * handler, which only wakes it, waits a bounded time, and hands the
 * signal on to the program's own handler or the default action. */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "base/gt_base.h"
#include "hot/gt_call.h"
#include "hot/gt_ring.h"
#include "session/gt_control.h"
#include "session/gt_flight.h"
#include "session/gt_session.h"
#include "writer/gt_writer.h"

#define GT_FLIGHT_CRASH_WAIT_MS 10000 /* a wedged dump must not keep a dying program alive */
#define GT_FLIGHT_LOOK_MS 250

static int gt_flight_enabled;
static uint64_t gt_flight_ns, gt_flight_bytes, gt_flight_hang_ns;
static _Atomic uint64_t gt_flight_since;  /* recording into memory since */
static _Atomic uint64_t gt_flight_fired;  /* what opens the next window fired then (0: not noted) */
static int gt_flight_efd = -1, gt_flight_done_fd = -1;
static _Atomic int gt_flight_crash_sig, gt_flight_crashing;
static GT_TLS int gt_tls_flight_thread;

static const int gt_flight_sigs[] = {SIGSEGV, SIGBUS, SIGABRT, SIGFPE, SIGILL};
#define GT_FLIGHT_NSIGS (int)(sizeof(gt_flight_sigs) / sizeof(gt_flight_sigs[0]))
static struct sigaction gt_flight_old[GT_FLIGHT_NSIGS];
static int gt_flight_installed[GT_FLIGHT_NSIGS];

int gt_flight_on(void)
{
    return gt_flight_enabled;
}

void gt_flight_note_trigger(uint64_t t_ns)
{
    uint64_t none = 0;
    if (gt_flight_enabled)
        atomic_compare_exchange_strong(&gt_flight_fired, &none, t_ns);
}

uint64_t gt_flight_window_start(uint64_t now)
{
    uint64_t since = atomic_load(&gt_flight_since);
    uint64_t lost = gt_ring_lost_end();
    if (lost >= since)
        since = lost + 1;
    /* The duration asked for is counted back from the trigger. */
    uint64_t fired = atomic_load(&gt_flight_fired);
    uint64_t at = fired && fired >= since && fired <= now ? fired : now;
    if (gt_flight_ns && at > gt_flight_ns && at - gt_flight_ns > since)
        since = at - gt_flight_ns;
    return since;
}

static void gt_flight_meta_u64(const char *key, uint64_t v)
{
    char buf[32];
    snprintf(buf, sizeof(buf), "%llu", (unsigned long long)v);
    gt_writer_set_meta(key, buf);
}

void gt_flight_window_meta(uint64_t since, uint64_t now)
{
    char buf[96];
    int n = 0;
    if (gt_flight_ns)
        n = snprintf(buf, sizeof(buf), "%.3fs,", (double)gt_flight_ns / 1e9);
    snprintf(buf + n, sizeof(buf) - (size_t)n, "%lluMiB", (unsigned long long)(gt_flight_bytes >> 20));
    gt_writer_set_meta("flight", buf);
    gt_flight_meta_u64("flight_start_ns", since);
    uint64_t fired = atomic_load(&gt_flight_fired);
    gt_flight_meta_u64("trigger_ns", fired && fired >= since && fired <= now ? fired : now);
    /* Where the rings ran out before the duration asked for: the history
     * is shorter than GPUTRACE_FLIGHT says. */
    gt_flight_meta_u64("flight_bytes_held", gt_ring_bytes_held());
    gt_writer_set_meta("flight_complete_from", gt_ring_lost_end() ? "overwritten" : "recording_start");
}

void gt_flight_handoff(void)
{
    gt_ring_set_overwrite(0);
}

static void gt_flight_push_one(const struct gt_event *e, void *arg)
{
    struct gt_event ev = *e;
    /* Its arguments are read after the real call returns: none yet. */
    memset(&ev.u, 0, sizeof(ev.u));
    ev.end_ns = *(const uint64_t *)arg;
    if (ev.end_ns < ev.start_ns)
        ev.end_ns = ev.start_ns;
    ev.result = -1;
    ev.corr = 0;
    ev.has_stream = 0;
    ev.stream = 0;
    gt_ring_push_as(&ev);
}

int gt_flight_push_inflight(uint64_t end)
{
    if (!gt_flight_enabled)
        return 0;
    return gt_ring_inflight_each(gt_flight_push_one, &end);
}

void gt_flight_resume(void)
{
    gt_ring_reset_lost();
    atomic_store(&gt_flight_since, gt_now_ns());
    atomic_store(&gt_flight_fired, 0);
    gt_ring_set_overwrite(1);
}

/* ---- the fatal signals ---- */

static void gt_flight_chain(int sig, siginfo_t *si, void *ctx, int i)
{
    struct sigaction *old = &gt_flight_old[i];
    if ((old->sa_flags & SA_SIGINFO) && old->sa_sigaction) {
        old->sa_sigaction(sig, si, ctx);
    } else if (old->sa_handler == SIG_IGN) {
        return;
    } else if (old->sa_handler == SIG_DFL) {
        /* The default back: a fault's instruction runs again and faults;
         * a sent signal (kill, raise, abort) is sent again, delivered once
         * this handler returns. Either way the process ends by it. */
        sigaction(sig, old, NULL);
        if (si->si_code <= 0 || sig == SIGABRT)
            raise(sig);
    } else {
        old->sa_handler(sig);
    }
}

static void gt_flight_on_fatal(int sig, siginfo_t *si, void *ctx)
{
    int saved = errno;
    int i = 0;
    while (i < GT_FLIGHT_NSIGS && gt_flight_sigs[i] != sig)
        i++;
    if (!gt_tls_flight_thread && !atomic_exchange(&gt_flight_crashing, 1)) {
        atomic_store(&gt_flight_crash_sig, sig);
        uint64_t one = 1;
        if (write(gt_flight_efd, &one, sizeof(one)) == sizeof(one)) {
            struct pollfd p = {gt_flight_done_fd, POLLIN, 0};
            uint64_t t0 = gt_now_ns();
            for (;;) {
                int left = GT_FLIGHT_CRASH_WAIT_MS - (int)((gt_now_ns() - t0) / 1000000);
                if (left <= 0 || poll(&p, 1, left) > 0 || errno != EINTR)
                    break;
            }
        }
    }
    errno = saved;
    if (i < GT_FLIGHT_NSIGS)
        gt_flight_chain(sig, si, ctx, i);
}

static void gt_flight_install(void)
{
    for (int i = 0; i < GT_FLIGHT_NSIGS; i++) {
        struct sigaction sa;
        memset(&sa, 0, sizeof(sa));
        sa.sa_sigaction = gt_flight_on_fatal;
        sigemptyset(&sa.sa_mask);
        sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESTART;
        if (sigaction(gt_flight_sigs[i], &sa, &gt_flight_old[i]) == 0)
            gt_flight_installed[i] = 1;
    }
}

/* ---- the thread ---- */

static const char *gt_flight_signame(int sig)
{
    switch (sig) {
    case SIGSEGV: return "SIGSEGV";
    case SIGBUS: return "SIGBUS";
    case SIGABRT: return "SIGABRT";
    case SIGFPE: return "SIGFPE";
    case SIGILL: return "SIGILL";
    default: return "a fatal signal";
    }
}

static void gt_flight_crash(void)
{
    int sig = atomic_load(&gt_flight_crash_sig);
    char why[96];
    snprintf(why, sizeof(why), "signal %d (%s)", sig, gt_flight_signame(sig));
    gt_flight_note_trigger(gt_now_ns());
    gt_session_window_dump(why);
    uint64_t one = 1;
    ssize_t w = write(gt_flight_done_fd, &one, sizeof(one));
    (void)w;
}

/* The hang rule: no event reached a ring (no call ended, no NVTX event)
 * for gt_flight_hang_ns, while recording into memory. Once per stall. */
static void gt_flight_hang_look(uint64_t *last, uint64_t *since, int *fired)
{
    uint64_t events;
    int inflight;
    if (gt_session_flight_look(&events, &inflight) < 0)
        return;
    uint64_t now = gt_now_ns();
    if (events != *last || !*since) {
        *last = events;
        *since = now;
        *fired = 0;
        return;
    }
    if (*fired || !events || now - *since < gt_flight_hang_ns)
        return;
    *fired = 1;
    char why[256];
    snprintf(why, sizeof(why), "hang>%.0fs: no CUDA call ended and no NVTX event for %.1f s; %d call%s in flight",
             (double)gt_flight_hang_ns / 1e9, (double)(now - *since) / 1e9, inflight, inflight == 1 ? "" : "s");
    gt_flight_note_trigger(now);
    gt_control_fire(why);
}

static void *gt_flight_main(void *arg)
{
    (void)arg;
    gt_tls_busy = 1;
    gt_tls_flight_thread = 1;
    uint64_t last = 0, since = 0;
    int fired = 0;
    for (;;) {
        struct pollfd p = {gt_flight_efd, POLLIN, 0};
        int r = poll(&p, 1, gt_flight_hang_ns ? GT_FLIGHT_LOOK_MS : -1);
        if (r > 0) {
            uint64_t v;
            ssize_t n = read(gt_flight_efd, &v, sizeof(v));
            (void)n;
            if (atomic_load(&gt_flight_crash_sig))
                gt_flight_crash();
            continue;
        }
        if (gt_flight_hang_ns)
            gt_flight_hang_look(&last, &since, &fired);
    }
    return NULL;
}

int gt_flight_start(const struct gt_config *cfg, int keep_last, char *err, size_t err_len)
{
    gt_flight_ns = keep_last ? 0 : cfg->flight_ns;
    gt_flight_bytes = keep_last ? cfg->max_size_bytes : cfg->flight_bytes;
    gt_flight_hang_ns = keep_last ? 0 : cfg->trigger_hang_ns;
    /* A thread may grow its ring to half the bytes: the smaller rings it
     * outgrew are given back (their pages) once it writes over. */
    uint64_t per = gt_flight_bytes / 2 / sizeof(struct gt_event);
    uint32_t events = GT_RING_FIRST_EVENTS;
    while ((uint64_t)events * 2 <= per && events < (1u << 28))
        events *= 2;
    gt_ring_set_overwrite(1);
    gt_ring_configure(events, gt_flight_bytes, gt_writer_wake);
    atomic_store(&gt_flight_since, gt_now_ns());
    gt_flight_efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    gt_flight_done_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (gt_flight_efd < 0 || gt_flight_done_fd < 0 || gt_thread_spawn(NULL, 1, gt_flight_main, NULL) != 0) {
        snprintf(err, err_len, "cannot start the flight recorder's thread");
        gt_ring_set_overwrite(0);
        return -1;
    }
    gt_flight_enabled = 1;
    gt_flight_install();
    return 0;
}

void gt_flight_after_fork_child(void)
{
    /* The thread is the parent's; the child's session starts its own. */
    if (!gt_flight_enabled)
        return;
    gt_flight_enabled = 0;
    for (int i = 0; i < GT_FLIGHT_NSIGS; i++)
        if (gt_flight_installed[i]) {
            sigaction(gt_flight_sigs[i], &gt_flight_old[i], NULL);
            gt_flight_installed[i] = 0;
        }
    close(gt_flight_efd);
    close(gt_flight_done_fd);
    gt_flight_efd = gt_flight_done_fd = -1;
    atomic_store(&gt_flight_crashing, 0);
    atomic_store(&gt_flight_crash_sig, 0);
    gt_ring_set_overwrite(0);
}
