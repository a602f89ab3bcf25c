/* gt_samples_int.h: the host samples as gt_samples.c holds them, shared
 * with gt_samples_wait.c (the other threads of a gap whose launching
 * thread waited). */
#ifndef GT_SAMPLES_INT_H
#define GT_SAMPLES_INT_H

#include <stddef.h>
#include <stdint.h>

#include "analysis/gt_analyze.h"

/* One sample, sorted by (tid, ns). */
struct gt_smp {
    int64_t tid;
    uint64_t ns;
    uint32_t key;       /* its name: index into the texts */
    uint32_t leaf;      /* the flame graph's node of its path */
    uint8_t cls;        /* enum gt_hcls */
    uint8_t driver;     /* its native stack starts in the CUDA driver's or runtime's own code */
    /* running samples: the name's frame alone (no state), the name and
     * the flame graph's leaf it counts under in a gap whose launching
     * thread waited */
    uint32_t where, wkey, wleaf;
};

enum gt_hcls { GT_HC_PYTHON, GT_HC_NATIVE, GT_HC_IO, GT_HC_SLEEP, GT_HC_LOCK, GT_HC_SYSCALL, GT_HC_WAITING, GT_HCLS };

/* A count of one key (a name, or a flame graph node), and its weight:
 * its share of a gap is weight over the gap's (gt_samples.c). */
struct gt_count {
    uint32_t key;
    uint64_t n, w;
};

/* The threads' runs in the sorted samples, made once. */
struct gt_tid_runs {
    struct gt_tid_run { int64_t tid; size_t first, last; int driver; } *v;
    size_t n;
};
/* 1 when a native stack's outermost frame that is not the system's (the
 * function its thread started in) is in the CUDA driver's, runtime's or
 * CUPTI's library, wherever installed: a thread of CUDA's own, never
 * counted as one that ran while a launching thread waited. */
int gt_driver_stack(sqlite3 *db, int64_t stack);
int gt_tid_runs_make(struct gt_tid_runs *t, const struct gt_smp *smp, size_t n);
void gt_tid_runs_free(struct gt_tid_runs *t);

/* For a gap whose launching thread waited: the other threads' running
 * samples inside it, into g->others (threads by samples, most first, each
 * with the frame most of its samples show; texts: the sample names), and
 * counted by their waited names (keys) and leaves, into keys and leaves
 * (room for as many as the samples): returns their total. */
uint64_t gt_gap_others(const struct gt_tid_runs *runs, const struct gt_smp *smp, struct gt_gap *g,
                       const char (*texts)[GT_HOST_TEXT], struct gt_count *keys, size_t *nkeys,
                       struct gt_count *leaves, size_t *nleaves);

#endif
