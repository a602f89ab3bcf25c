/* gt_stacks.h: native call stacks, captured raw and deduplicated at record
 * time into small ids; symbolized later, once per unique frame. */
#ifndef GT_STACKS_H
#define GT_STACKS_H

#include <stdint.h>

#include "base/gt_config.h" /* GT_STACK_MAX_DEPTH */


void gt_stacks_init(int depth);
/* The calling thread's stack, less the tracer's own frames (this
 * function's own frame is never part of it). 0: none. */
uint32_t gt_stack_capture(void);
/* Captures the calling thread answered from its memo of recurring stacks. */
uint64_t gt_stacks_memo_hits(void);
/* The id of a stack another thread's frames make (the sampler's). 0: none. */
uint32_t gt_stack_intern(const uintptr_t *ips, uint32_t n);
/* Frames of a stack id, innermost first. Returns the frame count. */
uint32_t gt_stack_frames(uint32_t id, const uintptr_t **ips);
uint64_t gt_stacks_dropped(void);
uint32_t gt_stacks_count(void);
/* Which code is the tracer's own (cut from every stack); tests set it. */
void gt_stacks_set_self(uintptr_t lo, uintptr_t hi);
/* Whether ip is in it (the sampler cuts the hooks' frames from the stacks
 * it unwinds: a thread blocked in a CUDA call shows the call, not us). */
int gt_stacks_is_self(uintptr_t ip);

#endif
