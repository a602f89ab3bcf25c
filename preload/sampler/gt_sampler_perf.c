/* gt_sampler_perf.c: running threads' native stacks from perf_event_open
 * (GPUTRACE_SAMPLE_NATIVE=perf or auto; gt_sampler_perf.h).
 *
 * One software task-clock event per sampled thread, counting only while
 * that thread runs, in user mode: every 1/(2 hz) of its CPU time the kernel
 * writes a sample (its program counter, and the callchain it walks by
 * frame pointers) into a small ring mapped here. Nothing is delivered to
 * the thread: no wakeup is ever asked for (no F_SETOWN, no O_ASYNC, no
 * sigtrap), and the sampler thread reads each ring at its own rounds. */
#include <errno.h>
#include <linux/perf_event.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "hot/gt_stacks.h"
#include "sampler/gt_sampler_perf.h"

/* Data pages of a ring, a power of two: at 100 Hz a round finds about one
 * sample of some hundred bytes; two pages hold dozens. */
#define GT_SPERF_DATA_PAGES 2
/* Frames the kernel walks (at most perf_event_max_stack, 127 by default). */
#define GT_SPERF_MAX_STACK 64

static long gt_sperf_page;

static int gt_sperf_open_fd(uint32_t tid, int hz)
{
    struct perf_event_attr a;
    memset(&a, 0, sizeof(a));
    a.size = sizeof(a);
    a.type = PERF_TYPE_SOFTWARE;
    a.config = PERF_COUNT_SW_TASK_CLOCK;
    /* ns of the thread's CPU time: twice a round, so that a thread that
     * got half a CPU or more since the last round has a sample of it
     * (once a round, a busy machine left many rounds without one) */
    a.sample_period = 1000000000ull / (2 * (uint64_t)(hz > 0 ? hz : 100));
    a.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CALLCHAIN;
    a.exclude_kernel = 1;
    a.exclude_hv = 1;
    a.exclude_callchain_kernel = 1;
    a.sample_max_stack = GT_SPERF_MAX_STACK;
    /* times on the trace's clock, to tell a sample of this round's */
    a.use_clockid = 1;
    a.clockid = CLOCK_MONOTONIC;
    /* wakeup_events and watermark stay 0 and nothing polls: no wakeups */
    return (int)syscall(SYS_perf_event_open, &a, (pid_t)tid, -1, -1, PERF_FLAG_FD_CLOEXEC);
}

int gt_sperf_open(struct gt_sperf *p, uint32_t tid, int hz)
{
    p->fd = -1;
    p->ring = NULL;
    if (!gt_sperf_page)
        gt_sperf_page = sysconf(_SC_PAGESIZE);
    int fd = gt_sperf_open_fd(tid, hz);
    if (fd < 0)
        return -1;
    size_t len = (size_t)gt_sperf_page * (1 + GT_SPERF_DATA_PAGES);
    /* read-write: the sampler says how far it read (data_tail), and the
     * kernel never overwrites what it has not read */
    void *ring = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (ring == MAP_FAILED) {
        int err = errno;
        close(fd);
        errno = err;
        return -1;
    }
    p->fd = fd;
    p->ring = ring;
    p->since_ns = 0;
    return 0;
}

void gt_sperf_close(struct gt_sperf *p)
{
    if (p->ring)
        munmap(p->ring, (size_t)gt_sperf_page * (1 + GT_SPERF_DATA_PAGES));
    if (p->fd >= 0)
        close(p->fd);
    p->fd = -1;
    p->ring = NULL;
}

void gt_sperf_forget(struct gt_sperf *p)
{
    /* A fork child: the ring is not mapped here (perf maps are not
     * copied), the event is the parent's thread's. */
    if (p->fd >= 0)
        close(p->fd);
    p->fd = -1;
    p->ring = NULL;
}

int gt_sperf_probe(uint32_t tid, int hz, char *why, size_t why_len)
{
    struct gt_sperf p;
    if (gt_sperf_open(&p, tid, hz) == 0) {
        gt_sperf_close(&p);
        return 0;
    }
    int err = errno;
    snprintf(why, why_len, "perf events refused (%s%s)", strerror(err),
             err == EACCES || err == EPERM ? ": perf_event_paranoid, seccomp or a container" : "");
    return -1;
}

/* Copies len bytes at offset off of the data area, which wraps. */
static void gt_sperf_copy(const uint8_t *data, uint64_t size, uint64_t off, void *out, size_t len)
{
    uint64_t at = off & (size - 1);
    size_t first = len < size - at ? len : (size_t)(size - at);
    memcpy(out, data + at, first);
    if (first < len)
        memcpy((uint8_t *)out + first, data, len - first);
}

uint32_t gt_sperf_take(struct gt_sperf *p, uint64_t now_ns, int want)
{
    if (!p->ring)
        return 0;
    struct perf_event_mmap_page *m = p->ring;
    uint64_t size = (uint64_t)gt_sperf_page * GT_SPERF_DATA_PAGES;
    const uint8_t *data = (const uint8_t *)p->ring + gt_sperf_page;
    uint64_t head = __atomic_load_n(&m->data_head, __ATOMIC_ACQUIRE), tail = m->data_tail;
    uint64_t since = p->since_ns;
    p->since_ns = now_ns;
    uint64_t rec[8 + GT_SPERF_MAX_STACK + 8];
    uintptr_t ips[GT_SPERF_MAX_STACK + 1];
    uint32_t n = 0;
    uint64_t best = 0;
    /* the latest sample since the last round; older ones go unread */
    while (want && tail + sizeof(struct perf_event_header) <= head) {
        struct perf_event_header h;
        gt_sperf_copy(data, size, tail, &h, sizeof(h));
        if (h.size < sizeof(h) || tail + h.size > head)
            break;
        if (h.type == PERF_RECORD_SAMPLE && h.size <= sizeof(rec)) {
            gt_sperf_copy(data, size, tail, rec, h.size);
            /* header, ip, pid|tid, time, nr, ips[nr] */
            if (h.size < 5 * 8) {
                tail += h.size;
                continue;
            }
            uint64_t ip = rec[1], time = rec[3], nr = rec[4];
            if (nr > (uint64_t)(h.size / 8 - 5)) /* never from the kernel; not followed */
                nr = 0;
            if (time > since && time >= best) {
                best = time;
                n = 0;
                for (uint64_t i = 0; i < nr && n < GT_SPERF_MAX_STACK; i++)
                    if (rec[5 + i] < PERF_CONTEXT_MAX && rec[5 + i]) /* not a context marker */
                        ips[n++] = (uintptr_t)rec[5 + i];
                /* the leaf always, even when the walk gave nothing */
                if (n == 0 || ips[0] != ip) {
                    memmove(ips + 1, ips, n * sizeof(*ips));
                    ips[0] = (uintptr_t)ip;
                    n++;
                }
            }
        }
        tail += h.size;
    }
    __atomic_store_n(&m->data_tail, head, __ATOMIC_RELEASE);
    return n ? gt_stack_intern(ips, n) : 0;
}
