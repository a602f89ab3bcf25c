/* gt_sampler_budget.h: the sampler's budget (GPUTRACE_SAMPLE_BUDGET): the
 * period between rounds that keeps the sampler's CPU within a share of one
 * core (gt_sampler_budget.c). Pure arithmetic on the two clocks it is
 * given, for the sampler's thread (and tests/unit/test_sampler_budget.c). */
#ifndef GT_SAMPLER_BUDGET_H
#define GT_SAMPLER_BUDGET_H

#include <stdint.h>

struct gt_sbudget {
    uint64_t base;    /* the period asked, 1 s / GPUTRACE_SAMPLE_HZ (ns) */
    uint64_t bp;      /* the budget, in hundredths of a percent of a core; 0: none */
    uint64_t period;  /* the period in force */
    uint64_t win_wall, win_cpu, win_rounds; /* the window under way: its start, its rounds */
    uint64_t avg;     /* a round's CPU cost, smoothed over windows (0: none yet) */
    uint64_t debt;    /* CPU spent beyond the budget, not yet paid back */
    uint64_t first;   /* the first round's cost, left out of the first window's average */
    int started;
    uint32_t windows; /* windows ended */
};

/* wall: CLOCK_MONOTONIC now; cpu: the sampler thread's CPU time now. */
void gt_sbudget_init(struct gt_sbudget *b, uint64_t base, int bp, uint64_t wall, uint64_t cpu);
/* After a round: the period to the next one (base or more). */
uint64_t gt_sbudget_after_round(struct gt_sbudget *b, uint64_t wall, uint64_t cpu);

#endif
