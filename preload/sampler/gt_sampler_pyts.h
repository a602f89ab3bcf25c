/* gt_sampler_pyts.h: the Python thread state of each thread of the
 * process, whether or not it ever called CUDA, read from the
 * interpreter's own list of thread states (gt_sampler_pyts.c). For the
 * sampler's thread alone. */
#ifndef GT_SAMPLER_PYTS_H
#define GT_SAMPLER_PYTS_H

#include <stddef.h>
#include <stdint.h>

/* Looks up what the walk needs (dlsym: on the thread that starts the
 * sampler, as the loader's lock is not for the sampler to take). */
void gt_spts_init(void);
/* Fills states[i] (left as is where not 0) with the thread state of the
 * thread tids[i], where the interpreter lists one. */
void gt_spts_fill(const uint32_t *tids, uintptr_t *states, size_t n);
void gt_spts_after_fork_child(void);

#endif
