/* gt_sampler.h: the sampler thread (`gt-sampler`): GPUTRACE_SAMPLE_HZ times
 * a second (fewer where its rounds cost more than GPUTRACE_SAMPLE_BUDGET
 * allows) it looks at every thread (GPUTRACE_SAMPLE_THREADS=all, the
 * default; or those that called CUDA) and records what it is doing: running, or
 * blocked in which system call (/proc/self/task/TID/syscall), the Python
 * stack it is in (read without the GIL through process_vm_readv, every
 * object checked), and, for a blocked thread, its native stack unwound
 * from the stack and instruction pointers the kernel reports
 * (gt_sampler_unwind.h; for a running one, with GPUTRACE_SAMPLE_NATIVE=perf,
 * the stack of a perf event's sample: gt_sampler_perf.h). No signal is
 * ever sent to the program's threads.
 * Samples go through the sampler's own ring to the writer, like calls. */
#ifndef GT_SAMPLER_H
#define GT_SAMPLER_H

#include <stddef.h>
#include <stdint.h>

/* Starts the thread (hz > 0); native is GPUTRACE_SAMPLE_NATIVE
 * (GT_NATIVE_*); budget_bp GPUTRACE_SAMPLE_BUDGET, the share of one core
 * the sampler may take, in hundredths of a percent (0: no bound). 0, or
 * -1 with a reason in why. */
int gt_sampler_start(int hz, int all, int native, int budget_bp, char *why, size_t why_len);
/* Stops and joins it (at most one period's wait); safe when not started. */
void gt_sampler_stop(void);
/* In a fork child: the thread did not come across. */
void gt_sampler_after_fork_child(void);

/* Counters for meta (docs/schema.md): rounds taken, samples recorded,
 * samples whose Python stack tore while read (dropped), samples the ring
 * had no room for (dropped). */
uint64_t gt_sampler_rounds(void);
uint64_t gt_sampler_taken(void);
uint64_t gt_sampler_torn(void);
/* Blocked threads' samples dropped because the thread ran while its
 * native stack was unwound (twice in a row). */
uint64_t gt_sampler_stale(void);
uint64_t gt_sampler_dropped(void);
/* Rounds the budget slowed (made at a longer period than asked, rounds
 * costing more than the budget allows): the rate fell below
 * GPUTRACE_SAMPLE_HZ. */
uint64_t gt_sampler_slowed(void);
/* The sampler thread's CPU time so far, in ns (bench/). */
uint64_t gt_sampler_cpu_ns(void);
/* meta.sample_native_stacks as the last start found it: "perf_callchain"
 * (blocked threads unwound too), "blocked_unwound", or "blocked_pc_only"
 * (the unwinder could not start); NULL before any start. */
const char *gt_sampler_native(void);

/* The stack of another thread, from its frames in this process's memory
 * (gt_sampler_py.c). 0 with *torn set when a read failed or the frames
 * changed under it; 0 alone when there is no Python frame. */
uint32_t gt_sampler_pystack(uintptr_t tstate, int *torn);
/* The same for n threads at once (at most GT_SPB_MAX), fewer system
 * calls: ids[i], and torn[i] set for a sample to drop. */
#define GT_SPB_MAX 64
void gt_sampler_pystacks(const uintptr_t *tstates, size_t n, uint32_t *ids, uint8_t *torn);
/* Buffers for the copies (once, at the first start). 0 or -1. */
int gt_sampler_py_init(void);

#endif
