/* gt_sampler_unwind.h: a blocked thread's native stack, unwound by the
 * sampler thread from the two registers the kernel reports for it
 * (/proc/self/task/TID/syscall: its stack and instruction pointers) and
 * its stack, which lies in this very process: libunwind's DWARF unwinder
 * over an address space of our own whose every read goes through
 * process_vm_readv (a bad address fails, never faults), with each
 * module's .eh_frame_hdr found from /proc/self/maps and the ELF headers
 * in memory (no lock of the loader's). No signal, no ptrace, no
 * privilege; the caller checks that the thread did not run meanwhile.
 * Sampler thread only. */
#ifndef GT_SAMPLER_UNWIND_H
#define GT_SAMPLER_UNWIND_H

#include <stddef.h>
#include <stdint.h>

/* Frames a stack keeps at most, innermost first. */
#define GT_SUNW_MAX 64

/* The address space (once; on the starting thread). 0, or -1: blocked
 * threads then keep their program counter alone. */
int gt_sunw_init(void);
/* ips[0] = pc, then the return addresses its callers' frames hold, as
 * far as the binaries' .eh_frame and the two registers lead (rbp, which
 * -O0 code finds its frame through, found from the stack when no callee
 * saved it; code that needs another register ends the walk): the frame
 * count, at least 1. */
uint32_t gt_sunw_stack(uintptr_t sp, uintptr_t pc, uintptr_t *ips, uint32_t max);
/* In a fork child: same mappings, another process to read. */
void gt_sunw_after_fork_child(void);

#endif
