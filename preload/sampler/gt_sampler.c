/* gt_sampler.c: the sampler thread (gt_sampler.h).
 *
 * What a sample costs the program: nothing on its threads. The state of a
 * thread comes from /proc/self/task/TID/syscall (the kernel waits for a
 * sleeping thread to be off the CPU to read it, which it already is; a
 * running one reads "running"), kept open per thread and read with pread;
 * its Python frames are copied with process_vm_readv. No signal, no
 * ptrace, no lock the program's threads take. The rounds keep to the
 * sampler's budget of CPU (gt_sampler_budget.h): where they cost more,
 * the rate falls. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "base/gt_base.h"
#include "base/gt_event.h"
#include "hot/gt_ring.h"
#include "hot/gt_stacks.h"
#include "hot/gt_threads.h"
#include "sampler/gt_sampler.h"
#include "sampler/gt_sampler_mods.h"
#include "sampler/gt_sampler_budget.h"
#include "sampler/gt_sampler_perf.h"
#include "sampler/gt_sampler_pyts.h"
#include "sampler/gt_sampler_tasks.h"
#include "sampler/gt_sampler_unwind.h"

#define GT_SAMPLER_MAX_THREADS GT_THREADS_MAX

/* Per sampled thread: its syscall file, kept open, its CPU clock, and its
 * last sample, which stands for the next one when the thread has not run
 * since (its CPU time, the scheduler's run time to the nanosecond,
 * unchanged): a blocked thread that never ran is blocked where it was,
 * with the same stacks, and costs one clock read instead of the file and
 * the walk. The clock is the cheapest look at another thread the kernel
 * offers: less than half a schedstat read, which it replaced. */
struct gt_sfd {
    uint32_t tid;
    int fd;
    clockid_t clock;
    int seen;   /* in this round */
    int have_last;
    uint64_t runtime;
    uintptr_t last_pystate;
    uint8_t ran; /* rounds in a row its clock said it had run (at most 255) */
    int cuda;   /* a thread of CUDA's own (its stack starts in CUDA's code): no longer sampled */
    int called; /* it called CUDA through the hooks: the program's, never CUDA's own */
    struct gt_event last;
    /* GPUTRACE_SAMPLE_NATIVE=perf/auto: the thread's perf event, which
     * gives a running thread its native stack (fd -1: none, or refused) */
    struct gt_sperf perf;
};

static struct {
    pthread_t thread;
    int started;
    int hz, all;
    int budget_bp; /* GPUTRACE_SAMPLE_BUDGET: hundredths of a percent of one core; 0 none */
    int perf;   /* running threads' stacks from perf events (the probe passed) */
    int unwind; /* blocked threads' stacks unwound (gt_sampler_unwind.h) */
    uint32_t self_tid;
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int stop;
    clockid_t cpu_clock;
    struct gt_sfd fds[GT_SAMPLER_MAX_THREADS];
    int nfds;
} gt_s = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* meta.sample_native_stacks: 0 not started, 1 blocked_pc_only, 2 perf_callchain,
 * 3 blocked_unwound */
static _Atomic int gt_s_native;
static _Atomic(uint64_t) gt_s_rounds, gt_s_taken, gt_s_torn, gt_s_stale, gt_s_dropped, gt_s_slowed, gt_s_cpu_ns;

uint64_t gt_sampler_rounds(void) { return atomic_load(&gt_s_rounds); }
uint64_t gt_sampler_taken(void) { return atomic_load(&gt_s_taken); }
uint64_t gt_sampler_torn(void) { return atomic_load(&gt_s_torn); }
uint64_t gt_sampler_stale(void) { return atomic_load(&gt_s_stale); }
uint64_t gt_sampler_dropped(void) { return atomic_load(&gt_s_dropped); }
uint64_t gt_sampler_slowed(void) { return atomic_load(&gt_s_slowed); }
uint64_t gt_sampler_cpu_ns(void) { return atomic_load(&gt_s_cpu_ns); }
const char *gt_sampler_native(void)
{
    int n = atomic_load(&gt_s_native);
    return n == 2 ? "perf_callchain" : n == 3 ? "blocked_unwound" : n == 1 ? "blocked_pc_only" : NULL;
}

/* The open files of a thread; NULL when they cannot be opened (gone). */
static struct gt_sfd *gt_sfd_of(uint32_t tid)
{
    for (int i = 0; i < gt_s.nfds; i++)
        if (gt_s.fds[i].tid == tid) {
            gt_s.fds[i].seen = 1;
            return &gt_s.fds[i];
        }
    if (gt_s.nfds == GT_SAMPLER_MAX_THREADS)
        return NULL;
    char path[64];
    snprintf(path, sizeof(path), "/proc/self/task/%u/syscall", tid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        gt_stasks_changed(); /* gone since it was listed */
        return NULL;
    }
    struct gt_sfd *f = &gt_s.fds[gt_s.nfds++];
    memset(f, 0, sizeof(*f));
    f->tid = tid;
    f->fd = fd;
    /* the kernel's per-thread scheduler clock of a thread id, as glibc's
     * pthread_getcpuclockid makes it (MAKE_THREAD_CPUCLOCK(tid, SCHED)) */
    f->clock = (clockid_t)((~(uint32_t)tid << 3) | 4 | 2);
    f->seen = 1;
    f->perf.fd = -1;
    /* a thread the system refuses (the locked-memory limit for perf
     * rings, no fd left) runs without a native stack; not retried */
    if (gt_s.perf)
        gt_sperf_open(&f->perf, tid, gt_s.hz);
    return f;
}

/* 1 when the thread has not been on a CPU since its last sample. */
static int gt_sfd_idle(struct gt_sfd *f)
{
    struct timespec ts;
    if (clock_gettime(f->clock, &ts) != 0) {
        f->have_last = 0; /* gone, or no clock: the file says which */
        return 0;
    }
    uint64_t runtime = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
    int idle = f->have_last && runtime == f->runtime && f->last.u.sample.state != GT_SAMPLE_RUNNING;
    f->runtime = runtime;
    return idle;
}

/* Closes the files of threads no longer listed (ended). */
static void gt_sfd_sweep(void)
{
    int j = 0;
    for (int i = 0; i < gt_s.nfds; i++) {
        if (gt_s.fds[i].seen) {
            gt_s.fds[i].seen = 0;
            gt_s.fds[j++] = gt_s.fds[i];
        } else {
            close(gt_s.fds[i].fd);
            gt_sperf_close(&gt_s.fds[i].perf);
        }
    }
    gt_s.nfds = j;
}

static void gt_sfd_close_all(void)
{
    for (int i = 0; i < gt_s.nfds; i++) {
        close(gt_s.fds[i].fd);
        gt_sperf_close(&gt_s.fds[i].perf);
    }
    gt_s.nfds = 0;
}

/* "running", or "NR a1 .. a6 SP PC", or "-1 SP PC" (blocked, not in a
 * system call). 0, or -1 when the thread is gone. */
static int gt_read_state(int fd, struct gt_event *e, uintptr_t *sp, uintptr_t *pc)
{
    char buf[256];
    ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);
    if (n <= 0)
        return -1;
    buf[n] = 0;
    *pc = *sp = 0;
    e->u.sample.syscall = -1;
    if (strncmp(buf, "running", 7) == 0) {
        e->u.sample.state = GT_SAMPLE_RUNNING;
        return 0;
    }
    char *p = buf, *end;
    long nr = strtol(p, &end, 10);
    if (end == p)
        return -1;
    /* The last two numbers are the stack pointer and program counter. */
    char *last = strrchr(buf, ' ');
    if (last) {
        *pc = (uintptr_t)strtoull(last + 1, NULL, 16);
        *last = 0;
        char *before = strrchr(buf, ' ');
        if (before)
            *sp = (uintptr_t)strtoull(before + 1, NULL, 16);
        *last = ' ';
    }
    if (nr >= 0) {
        e->u.sample.state = GT_SAMPLE_SYSCALL;
        e->u.sample.syscall = (int32_t)nr;
        /* select/pselect6 with no descriptors (a1 = nfds) and poll/ppoll
         * with none (a2 = nfds) are sleeps: Python before 3.11 sleeps so.
         * Told apart by a number of their own (GT_SYSCALL_NO_FDS), named
         * so in syscall_names, not as I/O. */
        if (nr == SYS_select || nr == SYS_pselect6 || nr == SYS_poll || nr == SYS_ppoll) {
            unsigned long long a[2] = {1, 1};
            const char *q = end;
            for (int i = 0; i < 2 && *q; i++) {
                char *qe;
                a[i] = strtoull(q, &qe, 16);
                if (qe == q)
                    break;
                q = qe;
            }
            if (a[nr == SYS_select || nr == SYS_pselect6 ? 0 : 1] == 0)
                e->u.sample.syscall = (int32_t)(GT_SYSCALL_NO_FDS + nr);
        }
    } else {
        e->u.sample.state = GT_SAMPLE_WAITING;
    }
    return 0;
}

/* The thread's CPU time, in ns: 0, or -1 when it is gone. */
static int gt_sfd_runtime(const struct gt_sfd *f, uint64_t *ns)
{
    struct timespec ts;
    if (clock_gettime(f->clock, &ts) != 0)
        return -1;
    *ns = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
    return 0;
}

/* 1 when a thread's stack, read from its outermost frame past the
 * system's libraries, first reaches CUDA's own (the driver's threads):
 * the report never counts them (docs/report.md, "Host during the gap"),
 * and a driver that polls would cost a walk a round for nothing. Asked
 * only of threads that never called CUDA through the hooks: a program's
 * thread blocked inside a CUDA call whose walk ended in the driver stays
 * sampled. */
static int gt_started_in_cuda(const uintptr_t *ips, uint32_t n)
{
    for (uint32_t i = n; i-- > 0;) {
        const struct gt_smod *m = gt_smods_find(ips[i]);
        if (m && m->kind == GT_SMOD_CUDA)
            return 1;
        if (m && m->kind == GT_SMOD_OTHER)
            return 0;
    }
    return 0;
}

/* A blocked thread's native stack, unwound from its stack and the two
 * registers its syscall file gave (gt_sampler_unwind.h), kept only when
 * the thread did not run meanwhile: its CPU clock, read before its state
 * (f->runtime) and again after the walk, unchanged. That is stronger
 * than reading the syscall file again (a thread may wake and block again
 * at the same place with other frames above it), and cheaper. A thread
 * that ran gets one more try from its state read afresh; then the sample
 * is dropped and counted (meta.samples_stale). 0, or -1: drop it. */
static int gt_unwind_blocked(struct gt_sfd *f, struct gt_event *e, uintptr_t sp, uintptr_t pc)
{
    for (int tries = 0;; tries++) {
        uintptr_t ips[GT_SUNW_MAX];
        uint32_t n = gt_sunw_stack(sp, pc, ips, GT_SUNW_MAX);
        uint64_t now;
        if (gt_sfd_runtime(f, &now) < 0)
            return -1; /* ended */
        if (now == f->runtime) {
            /* the tracer's own frames (a hook, in a thread blocked in a
             * CUDA call) are cut, as from the calls' stacks */
            uint32_t k = 0;
            for (uint32_t i = 0; i < n; i++)
                if (!gt_stacks_is_self(ips[i]))
                    ips[k++] = ips[i];
            f->cuda = !f->called && gt_started_in_cuda(ips, k);
            e->stack_id = k ? gt_stack_intern(ips, k) : gt_stack_intern(&pc, 1);
            return 0;
        }
        f->runtime = now;
        if (tries) {
            atomic_fetch_add_explicit(&gt_s_stale, 1, memory_order_relaxed);
            return -1;
        }
        if (gt_read_state(f->fd, e, &sp, &pc) < 0)
            return -1;
        if (e->u.sample.state == GT_SAMPLE_RUNNING || !pc)
            return 0; /* running now: no stack of its own to read here */
    }
}

static void gt_push(const struct gt_event *e)
{
    if (gt_ring_push(e) < 0)
        atomic_fetch_add_explicit(&gt_s_dropped, 1, memory_order_relaxed);
    else
        atomic_fetch_add_explicit(&gt_s_taken, 1, memory_order_relaxed);
}

/* Samples waiting for their Python stacks, read for all at once. */
static struct {
    struct gt_event e[GT_SPB_MAX];
    struct gt_sfd *f[GT_SPB_MAX];
    uintptr_t ts[GT_SPB_MAX];
    uint32_t ids[GT_SPB_MAX];
    uint8_t torn[GT_SPB_MAX];
    size_t n;
} gt_batch;

static void gt_batch_flush(void)
{
    if (!gt_batch.n)
        return;
    gt_sampler_pystacks(gt_batch.ts, gt_batch.n, gt_batch.ids, gt_batch.torn);
    for (size_t i = 0; i < gt_batch.n; i++) {
        if (gt_batch.torn[i]) {
            atomic_fetch_add_explicit(&gt_s_torn, 1, memory_order_relaxed);
            continue;
        }
        struct gt_event *e = &gt_batch.e[i];
        e->pystack_id = gt_batch.ids[i];
        struct gt_sfd *f = gt_batch.f[i];
        f->last = *e;
        f->last_pystate = gt_batch.ts[i];
        f->have_last = 1;
        gt_push(e);
    }
    gt_batch.n = 0;
}

/* A Python thread whose clock said it had run at each of its last
 * GT_SFD_RAN_SKIP rounds (a thread of a busy pool; one waiting for the
 * GIL, which wakes every 5 ms) has its clock read one round in
 * GT_SFD_RAN_EVERY only: the read would most likely only say it ran
 * again, and the sample is taken afresh either way. Native threads read
 * it every round: a blocked one's walk is checked against it. */
#define GT_SFD_RAN_SKIP 4
#define GT_SFD_RAN_EVERY 8u
static unsigned gt_round_no;

static void gt_sample_one(uint32_t tid, uintptr_t pystate, uint64_t now, int called)
{
    struct gt_event e;
    memset(&e, 0, sizeof(e));
    e.api = GT_API_SAMPLE;
    e.start_ns = e.end_ns = now;
    e.u.sample.tid = tid;
    struct gt_sfd *f = gt_sfd_of(tid);
    if (!f || f->cuda)
        return; /* ended, or CUDA's own */
    f->called |= called;
    int check = !pystate || f->ran < GT_SFD_RAN_SKIP || gt_round_no % GT_SFD_RAN_EVERY == 0;
    int idle = check && gt_sfd_idle(f);
    if (check)
        f->ran = idle ? 0 : f->ran < 255 ? f->ran + 1 : 255;
    if (idle && f->last_pystate == pystate) {
        e = f->last;
        e.start_ns = e.end_ns = now;
        gt_push(&e);
        return;
    }
    uintptr_t pc, sp;
    f->have_last = 0;
    if (gt_read_state(f->fd, &e, &sp, &pc) < 0) {
        /* ended; and should its id be a new thread's already (ids are
         * reused), the file is the old one's: closed at the round's end,
         * opened afresh when the id is listed again */
        f->seen = 0;
        gt_stasks_changed();
        return;
    }
    /* blocked: its whole native stack, unwound, unless its Python stack
     * names it (the interpreter's frames cost a deep walk for nothing the
     * report shows); else the program counter alone */
    if (pc && e.u.sample.state != GT_SAMPLE_RUNNING && gt_s.unwind && !pystate) {
        if (gt_unwind_blocked(f, &e, sp, pc) < 0)
            return; /* stale or ended: the next round reads it afresh */
    } else if (pc) {
        e.stack_id = gt_stack_intern(&pc, 1);
    }
    /* running: the latest perf sample since the last round, if any;
     * blocked: the samples of its last run are not needed */
    if (f->perf.ring)
        e.stack_id = gt_sperf_take(&f->perf, now, e.u.sample.state == GT_SAMPLE_RUNNING) ?: e.stack_id;
    if (pystate) {
        if (gt_batch.n == GT_SPB_MAX)
            gt_batch_flush();
        gt_batch.e[gt_batch.n] = e;
        gt_batch.f[gt_batch.n] = f;
        gt_batch.ts[gt_batch.n++] = pystate;
        return;
    }
    f->last = e;
    f->last_pystate = 0;
    f->have_last = 1;
    gt_push(&e);
}

static void gt_round(void)
{
    static uint32_t tids[GT_SAMPLER_MAX_THREADS], reg_tids[GT_SAMPLER_MAX_THREADS];
    static uintptr_t states[GT_SAMPLER_MAX_THREADS], reg_states[GT_SAMPLER_MAX_THREADS];
    static uint8_t called[GT_SAMPLER_MAX_THREADS];
    size_t nreg = gt_threads_snapshot(reg_tids, reg_states, GT_SAMPLER_MAX_THREADS), n;
    if (gt_s.all) {
        n = gt_stasks_list(tids, GT_SAMPLER_MAX_THREADS);
        for (size_t i = 0; i < n; i++) {
            states[i] = 0;
            called[i] = 0;
            for (size_t j = 0; j < nreg; j++)
                if (reg_tids[j] == tids[i]) {
                    states[i] = reg_states[j];
                    called[i] = 1;
                }
        }
        /* threads that never called CUDA: from the interpreter's list */
        gt_spts_fill(tids, states, n);
    } else {
        n = nreg;
        memcpy(tids, reg_tids, n * sizeof(*tids));
        memcpy(states, reg_states, n * sizeof(*states));
        memset(called, 1, n);
    }
    uint64_t now = gt_now_ns();
    gt_round_no++;
    for (size_t i = 0; i < n; i++) {
        if (tids[i] == gt_s.self_tid || gt_threads_is_tracer(tids[i]))
            continue;
        gt_sample_one(tids[i], states[i], now, called[i]);
    }
    gt_batch_flush();
    gt_sfd_sweep();
    atomic_fetch_add_explicit(&gt_s_rounds, 1, memory_order_relaxed);
}

static uint64_t gt_ts_ns(const struct timespec *t)
{
    return (uint64_t)t->tv_sec * 1000000000ull + (uint64_t)t->tv_nsec;
}

static void *gt_sampler_main(void *arg)
{
    (void)arg;
    gt_tls_busy = 1; /* the tracer's own thread: never recorded */
    gt_s.self_tid = (uint32_t)syscall(SYS_gettid);
    gt_threads_mark_tracer(gt_s.self_tid);
    pthread_getcpuclockid(pthread_self(), &gt_s.cpu_clock);
    uint64_t period = 1000000000ull / (uint64_t)gt_s.hz;
    struct timespec next;
    clock_gettime(CLOCK_MONOTONIC, &next);
    struct timespec cpu;
    clock_gettime(gt_s.cpu_clock, &cpu);
    struct gt_sbudget budget;
    gt_sbudget_init(&budget, period, gt_s.budget_bp, gt_ts_ns(&next), gt_ts_ns(&cpu));
    uint64_t cur = period; /* the period in force: the budget's */
    pthread_mutex_lock(&gt_s.lock);
    while (!gt_s.stop) {
        uint64_t ns = (uint64_t)next.tv_nsec + cur;
        next.tv_sec += (time_t)(ns / 1000000000ull);
        next.tv_nsec = (long)(ns % 1000000000ull);
        while (!gt_s.stop && pthread_cond_timedwait(&gt_s.cond, &gt_s.lock, &next) != ETIMEDOUT)
            ;
        if (gt_s.stop)
            break;
        pthread_mutex_unlock(&gt_s.lock);
        /* A window (standby) or the trace (exit) may have closed. */
        if (atomic_load_explicit(&gt_state, memory_order_acquire) == GT_STATE_ACTIVE)
            gt_round();
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        if (clock_gettime(gt_s.cpu_clock, &cpu) == 0) {
            atomic_store(&gt_s_cpu_ns, gt_ts_ns(&cpu));
            /* the budget: the rate falls where rounds cost more than it
             * allows (gt_sampler_budget.c), counted in meta.samples_slowed */
            cur = gt_sbudget_after_round(&budget, gt_ts_ns(&now), gt_ts_ns(&cpu));
            if (cur > period)
                atomic_fetch_add_explicit(&gt_s_slowed, 1, memory_order_relaxed);
        }
        /* Behind by more than a period (the machine was busy): start
         * again from now rather than catch up in a burst. */
        if (gt_ts_ns(&now) > gt_ts_ns(&next) + cur)
            next = now;
        pthread_mutex_lock(&gt_s.lock);
    }
    pthread_mutex_unlock(&gt_s.lock);
    gt_sfd_close_all();
    gt_stasks_close();
    return NULL;
}

int gt_sampler_start(int hz, int all, int native, int budget_bp, char *why, size_t why_len)
{
    if (gt_s.started || hz <= 0)
        return 0;
    /* Asked for, perf events are tried once, on this thread: refused
     * (perf_event_paranoid, seccomp, a container), the sampler goes on
     * without, one meta value says so, and a line only when perf was
     * asked for by name (once a process: standby starts the sampler for
     * each window). */
    static int said;
    gt_s.perf = 0;
    if (native == GT_NATIVE_PERF || native == GT_NATIVE_AUTO) {
        char pwhy[160];
        if (gt_sperf_probe((uint32_t)syscall(SYS_gettid), hz, pwhy, sizeof(pwhy)) == 0)
            gt_s.perf = 1;
        else if (native == GT_NATIVE_PERF && !said++)
            gt_warn("GPUTRACE_SAMPLE_NATIVE=perf: %s; running threads' native stacks not recorded", pwhy);
    }
    /* blocked threads' stacks: the address space is made once (on this
     * thread: it allocates); without it, the program counter alone */
    gt_s.unwind = gt_sunw_init() == 0;
    atomic_store(&gt_s_native, gt_s.perf ? 2 : gt_s.unwind ? 3 : 1);
    gt_spts_init();
    if (gt_sampler_py_init() < 0) {
        snprintf(why, why_len, "out of memory");
        return -1;
    }
    gt_s.hz = hz;
    gt_s.all = all;
    gt_s.budget_bp = budget_bp;
    /* Counted per trace (a standby process writes one per window). */
    atomic_store(&gt_s_rounds, 0);
    atomic_store(&gt_s_taken, 0);
    atomic_store(&gt_s_torn, 0);
    atomic_store(&gt_s_stale, 0);
    atomic_store(&gt_s_dropped, 0);
    atomic_store(&gt_s_slowed, 0);
    gt_s.stop = 0;
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&gt_s.cond, &ca);
    pthread_condattr_destroy(&ca);
    int rc = gt_thread_spawn(&gt_s.thread, 0, gt_sampler_main, NULL);
    if (rc != 0) {
        snprintf(why, why_len, "cannot start the sampler thread: %s", strerror(rc));
        return -1;
    }
    pthread_setname_np(gt_s.thread, "gt-sampler");
    gt_s.started = 1;
    return 0;
}

void gt_sampler_stop(void)
{
    if (!gt_s.started)
        return;
    pthread_mutex_lock(&gt_s.lock);
    gt_s.stop = 1;
    pthread_cond_signal(&gt_s.cond);
    pthread_mutex_unlock(&gt_s.lock);
    pthread_join(gt_s.thread, NULL);
    gt_s.started = 0;
}

void gt_sampler_after_fork_child(void)
{
    /* The lock may have been held by the sampler at the fork. */
    pthread_mutex_t fresh = PTHREAD_MUTEX_INITIALIZER;
    gt_s.lock = fresh;
    gt_s.started = 0;
    /* the parent's threads' files and perf events */
    for (int i = 0; i < gt_s.nfds; i++) {
        close(gt_s.fds[i].fd);
        gt_sperf_forget(&gt_s.fds[i].perf);
    }
    gt_s.nfds = 0;
    /* the parent's thread list ("self" was the parent at its open) */
    gt_stasks_close();
    gt_sunw_after_fork_child();
    gt_spts_after_fork_child();
    atomic_store(&gt_s_native, 0); /* the child's start probes again */
    atomic_store(&gt_s_rounds, 0);
    atomic_store(&gt_s_taken, 0);
    atomic_store(&gt_s_torn, 0);
    atomic_store(&gt_s_stale, 0);
    atomic_store(&gt_s_dropped, 0);
    atomic_store(&gt_s_slowed, 0);
    atomic_store(&gt_s_cpu_ns, 0);
}
