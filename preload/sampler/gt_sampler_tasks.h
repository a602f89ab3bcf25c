/* gt_sampler_tasks.h: the ids of every thread of the process, for the
 * sampler's rounds (gt_sampler_tasks.c). For the sampler's thread alone. */
#ifndef GT_SAMPLER_TASKS_H
#define GT_SAMPLER_TASKS_H

#include <stddef.h>
#include <stdint.h>

/* The process's thread ids, up to max, into tids: their number. */
size_t gt_stasks_list(uint32_t *tids, size_t max);
/* A listed thread was found gone: the next round lists them afresh. */
void gt_stasks_changed(void);
/* The list open at exit, or the parent's in a fork child. */
void gt_stasks_close(void);

#endif
