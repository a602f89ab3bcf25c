/* The sampler's budget (preload/sampler/gt_sampler_budget.c), driven with
 * simulated clocks: rounds of a set CPU cost, the wall clock advanced by
 * the period the budget gives. The long-run share of a core stays within
 * the budget; after the first 4 rounds the period changes only between
 * 250 ms windows; a cost paid once leaves no hole; phases whose rounds
 * cost differently are sampled alike; with no budget, or rounds within
 * it, the period is the one asked. */
#include <stdint.h>
#include "sampler/gt_sampler_budget.h"
#include "unit.h"

#define MS 1000000ull
#define US 1000ull

struct sim {
    struct gt_sbudget b;
    uint64_t wall0, cpu0; /* where the run started */
    uint64_t wall, cpu, rounds, slowed, longest;
    uint64_t last_change, changes_too_close; /* period changes less than a window apart */
};

static void sim_init(struct sim *s, uint64_t base, int bp)
{
    s->wall = s->wall0 = 1000 * MS;
    s->cpu = s->cpu0 = 5 * MS;
    s->rounds = s->slowed = s->longest = s->changes_too_close = 0;
    s->last_change = 0; /* none yet: the first comes after the first 4 rounds */
    gt_sbudget_init(&s->b, base, bp, s->wall, s->cpu);
}

/* one round costing cost of CPU; the wall clock moves by the period */
static void sim_round(struct sim *s, uint64_t cost)
{
    uint64_t before = s->b.period;
    s->cpu += cost;
    uint64_t p = gt_sbudget_after_round(&s->b, s->wall, s->cpu);
    if (p != before) {
        if (s->last_change && s->wall - s->last_change < 250 * MS)
            s->changes_too_close++;
        s->last_change = s->wall;
    }
    if (p > s->b.base)
        s->slowed++;
    if (p > s->longest)
        s->longest = p;
    s->wall += p;
    s->rounds++;
}

/* rounds costing cost until `until` of wall time has passed since the start */
static void sim_until(struct sim *s, uint64_t until, uint64_t cost)
{
    while (s->wall - s->wall0 < until)
        sim_round(s, cost);
}

/* until `until`: phases of phase wall time each, their rounds costing
 * cost[0] and cost[1] by turns; the rounds made in each kind of phase
 * after the first second counted in made[] */
static void sim_phases(struct sim *s, uint64_t until, uint64_t phase, const uint64_t cost[2], uint64_t made[2])
{
    while (s->wall - s->wall0 < until) {
        uint64_t at = s->wall - s->wall0;
        int k = (int)(at / phase % 2);
        if (at >= 1000 * MS)
            made[k]++;
        sim_round(s, cost[k]);
    }
}

/* the share of a core since the start, in percent */
static double share(const struct sim *s)
{
    return 100.0 * (double)(s->cpu - s->cpu0) / (double)(s->wall - s->wall0);
}

int main(void)
{
    struct sim s;
    /* no budget: the period asked, whatever a round costs */
    sim_init(&s, 10 * MS, 0);
    for (int i = 0; i < 1000; i++)
        sim_round(&s, 500 * US);
    CHECK(s.slowed == 0 && s.longest == 10 * MS);

    /* rounds within the budget (50 us of 100 allowed at 1%, 100 Hz) */
    sim_init(&s, 10 * MS, 100);
    for (int i = 0; i < 2000; i++)
        sim_round(&s, 50 * US);
    CHECK(s.slowed == 0 && s.longest == 10 * MS);

    /* rounds costing 250 us at 1%: 26.3 ms apart once settled (the
     * period aims at 95% of the budget); the share over 60 s within the
     * budget (the first windows' excess paid back) */
    sim_init(&s, 10 * MS, 100);
    sim_until(&s, 60000 * MS, 250 * US);
    CHECK(share(&s) <= 1.0);
    CHECK(share(&s) >= 0.9);
    CHECK(s.b.period >= 26 * MS && s.b.period <= 27 * MS);
    CHECK(s.changes_too_close == 0);
    /* and within it over the first 5 s too */
    sim_init(&s, 10 * MS, 100);
    sim_until(&s, 5000 * MS, 250 * US);
    CHECK(share(&s) <= 1.0);
    CHECK(s.changes_too_close == 0);

    /* the same at 0.2%: 131.6 ms apart */
    sim_init(&s, 10 * MS, 20);
    sim_until(&s, 60000 * MS, 250 * US);
    CHECK(share(&s) <= 0.2);
    CHECK(s.b.period >= 130 * MS && s.b.period <= 133 * MS);

    /* cheap rounds (20 us) with one of 40 ms (the first walks of many
     * new threads) after 10 s: no period over 30 ms after it, and the
     * share over the whole run within the budget */
    sim_init(&s, 10 * MS, 100);
    sim_until(&s, 10000 * MS, 20 * US);
    s.longest = 0;
    sim_round(&s, 40 * MS);
    sim_until(&s, 60000 * MS, 20 * US);
    CHECK(s.longest <= 30 * MS);
    CHECK(share(&s) <= 1.0);

    /* a step: 16 threads, then 200 (costs 12 times over): settled within
     * a few seconds, and the share over the run within the budget */
    sim_init(&s, 10 * MS, 100);
    sim_until(&s, 5000 * MS, 80 * US);
    sim_until(&s, 65000 * MS, 960 * US);
    CHECK(share(&s) <= 1.0);
    CHECK(s.b.period >= 99 * MS && s.b.period <= 104 * MS);
    CHECK(s.changes_too_close == 0);

    /* phases of 100 ms by turns whose rounds cost 60 and 180 us (a
     * thread that runs, then one blocked, its stack unwound), at 1000 Hz
     * and 0.5%: the rate falls, but not more in the dearer phases (a
     * period that followed each round's cost would sample them a third
     * as often, and the report's shares of each with them) */
    {
        const uint64_t cost[2] = {60 * US, 180 * US};
        uint64_t made[2] = {0, 0};
        sim_init(&s, 1 * MS, 50);
        sim_phases(&s, 20000 * MS, 100 * MS, cost, made);
        CHECK(s.slowed > 0);
        CHECK(made[0] > 300 && made[1] > 300);
        CHECK(made[0] * 100 <= made[1] * 110 && made[1] * 100 <= made[0] * 110);
        CHECK(share(&s) <= 0.5);
        CHECK(s.changes_too_close == 0);
    }

    /* 1000 Hz at 10%: rounds of 150 us, 1.58 ms apart */
    sim_init(&s, 1 * MS, 1000);
    sim_until(&s, 30000 * MS, 150 * US);
    CHECK(share(&s) <= 10.0);
    CHECK(s.b.period >= 1560 * US && s.b.period <= 1600 * US);

    return unit_report("test_sampler_budget");
}
