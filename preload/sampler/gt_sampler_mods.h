/* gt_sampler_mods.h: the modules (executable, libraries, vDSO) a blocked
 * thread's stack runs through, each with the binary search table of its
 * .eh_frame_hdr that libunwind reads (gt_sampler_unwind.c), found from
 * /proc/self/maps and the ELF headers in memory, without the loader's
 * lock. Sampler thread only. */
#ifndef GT_SAMPLER_MODS_H
#define GT_SAMPLER_MODS_H

#include <stdint.h>

struct gt_smod {
    uintptr_t lo, hi;          /* its executable segments */
    uintptr_t segbase;         /* .eh_frame_hdr */
    uintptr_t table;           /* its binary search table */
    uintptr_t table_len;       /* in words: one per entry (two int32) */
    int mapped;                /* an executable mapping lies in [lo, hi) */
    uint8_t kind;              /* enum gt_smod_kind */
};

/* What a module is, by its path: the system's (under /lib/, /lib64/,
 * /usr/lib/, /usr/lib64/), CUDA's own (libcuda.so*, libcudart.so*,
 * libcupti.so*, libnvidia-*, wherever installed), or another. */
enum gt_smod_kind { GT_SMOD_OTHER, GT_SMOD_SYSTEM, GT_SMOD_CUDA };

/* Buffers, once (on the starting thread). 0, or -1. */
int gt_smods_init(void);
/* The module whose code holds ip, as last read; NULL when none. */
const struct gt_smod *gt_smods_find(uintptr_t ip);
/* The same, reading the mappings again when ip is in none (a library
 * loaded since), each fruitless read waiting twice as long for the next
 * (1 s up to 64 s). */
const struct gt_smod *gt_smods_of(uintptr_t ip);
/* 1 once after the mappings were read again: what was found from the
 * modules before may not hold. */
int gt_smods_rescanned(void);
void gt_smods_after_fork_child(void);

#endif
