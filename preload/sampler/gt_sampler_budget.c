/* gt_sampler_budget.c: the period that keeps the sampler within its budget
 * (gt_sampler_budget.h).
 *
 * Each sampled thread costs the sampler a few microseconds a round (its
 * state from /proc, its stacks): with many busy threads, or on a loaded
 * machine, rounds at GPUTRACE_SAMPLE_HZ would cost more than the share of
 * a core the sampler may take. The rate falls instead.
 *
 * The period changes only between windows of 250 ms, and slowly: from
 * the CPU a round has cost over the last seconds (each window weighs an
 * eighth, after the first second), never from the round just made. A round costs more when the
 * threads are blocked (their stacks are unwound) or new (their files
 * opened, their first walks) than when they run; a period that followed
 * those costs closely would sample some phases of a program less often
 * than others (a loop that blocks every 300 ms, say), which would bias
 * every share the report draws from the samples. Within a window the
 * period is constant, as without a budget. The first window is the first
 * four rounds, made at the rate asked while their cost is unknown.
 *
 * The budget holds over the run, not only on average: CPU spent beyond it
 * (the first windows, before the cost of a round is known; a stretch
 * whose rounds cost more than the last ones) is a debt, paid back over
 * the next seconds by a longer period, half of it a second, with at most
 * a quarter of the budget given to it (so that a cost paid once, the
 * first walks of many new threads, leaves no hole in the samples); the
 * period aims at 95% of the budget besides. Nothing is kept as credit: a
 * cheap stretch does not buy a burst later. */
#include "sampler/gt_sampler_budget.h"

#define GT_SBUDGET_WINDOW 250000000ull /* ns */
#define GT_SBUDGET_FIRST_ROUNDS 4
#define GT_SBUDGET_SECOND 1000000000ull

void gt_sbudget_init(struct gt_sbudget *b, uint64_t base, int bp, uint64_t wall, uint64_t cpu)
{
    b->base = b->period = base;
    b->bp = bp > 0 ? (uint64_t)bp : 0;
    b->win_wall = wall;
    b->win_cpu = cpu;
    b->win_rounds = 0;
    b->avg = 0;
    b->debt = 0;
    b->first = 0;
    b->started = 0;
    b->windows = 0;
}

uint64_t gt_sbudget_after_round(struct gt_sbudget *b, uint64_t wall, uint64_t cpu)
{
    if (!b->bp)
        return b->base;
    if (!b->started) {
        /* the first round: every thread's file opened, its first walk,
         * the modules' tables found; paid once, in the debt but not in
         * what a round costs */
        b->started = 1;
        b->first = cpu > b->win_cpu ? cpu - b->win_cpu : 0;
    }
    b->win_rounds++;
    /* the first window is its first rounds alone: until they are
     * measured the rate is the one asked, whatever the cost */
    if (cpu < b->win_cpu ||
        (b->windows ? wall < b->win_wall + GT_SBUDGET_WINDOW : b->win_rounds < GT_SBUDGET_FIRST_ROUNDS))
        return b->period;
    uint64_t used = cpu - b->win_cpu, span = wall - b->win_wall;
    uint64_t allowed = span * b->bp / 10000u;
    if (used > allowed)
        b->debt += used - allowed;
    else
        b->debt -= b->debt < allowed - used ? b->debt : allowed - used;
    /* a window that cost over 4 times the average (a cost paid once: the
     * first walks of new threads, a rescan of the mappings) counts as 4
     * times it; what it spent beyond the budget is in the debt all the
     * same */
    uint64_t cost = used / b->win_rounds;
    if (b->first && b->win_rounds > 1)
        cost = (used - b->first) / (b->win_rounds - 1);
    b->first = 0;
    if (b->avg && cost > 4 * b->avg)
        cost = 4 * b->avg;
    /* each window weighs an eighth; the first second's a half each, so
     * that the rate settles within it */
    b->windows++;
    b->avg = !b->avg ? cost : b->windows <= 4 ? (b->avg + cost) / 2 : (7 * b->avg + cost) / 8;
    /* a second's budget, less a twentieth kept in hand (a round's cost
     * moves with the rate: fewer rounds find more threads changed) and
     * less what pays the debt back (half the debt a second, a quarter of
     * the budget at most) */
    uint64_t per_s = GT_SBUDGET_SECOND * b->bp / 10000u;
    uint64_t payback = b->debt / 2 < per_s / 4 ? b->debt / 2 : per_s / 4;
    uint64_t usable = per_s - per_s / 20 - payback;
    uint64_t need = (uint64_t)((unsigned __int128)b->avg * GT_SBUDGET_SECOND / usable);
    b->period = need > b->base ? need : b->base;
    b->win_wall = wall;
    b->win_cpu = cpu;
    b->win_rounds = 0;
    return b->period;
}
