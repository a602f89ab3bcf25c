/* gt_sampler_perf.h: a running thread's native stack, from a task-clock
 * perf event on that thread (GPUTRACE_SAMPLE_NATIVE=perf or auto): its
 * user callchain at the latest sample since the sampler's last round.
 * Sampler thread only; no signal, no wakeup, ever. */
#ifndef GT_SAMPLER_PERF_H
#define GT_SAMPLER_PERF_H

#include <stddef.h>
#include <stdint.h>

struct gt_sperf {
    int fd;          /* -1: none */
    void *ring;      /* the mapped ring: one page of header, a few of data */
    uint64_t since_ns; /* the last round read */
};

/* Whether the system lets this process open the event on thread tid
 * (the caller's own): 0, or -1 with why (EACCES, EPERM, ENOSYS, ENOENT:
 * perf_event_paranoid, seccomp, a container, no perf in the kernel). */
int gt_sperf_probe(uint32_t tid, int hz, char *why, size_t why_len);
/* Opens thread tid's event and ring, one sample each 1/hz of its CPU
 * time. 0, or -1 (errno) with p->fd == -1. */
int gt_sperf_open(struct gt_sperf *p, uint32_t tid, int hz);
void gt_sperf_close(struct gt_sperf *p);
/* In a fork child: closes the parent's event without unmapping. */
void gt_sperf_forget(struct gt_sperf *p);
/* Reads the ring up to now (the round's time): with want, the stack id
 * of the latest sample taken since the previous call, 0 when none;
 * without, the samples are dropped unread. */
uint32_t gt_sperf_take(struct gt_sperf *p, uint64_t now_ns, int want);

#endif
