/* gt_steps.c: the step watcher of gt_steps.h.
 *
 * Each thread keeps the nesting depth at which its open step was pushed
 * (or the id of its open start/end step); a step's end adds its duration
 * to a process-wide ring of the last GT_STEPS_KEPT, whose median it is
 * judged against once GT_STEPS_WARM steps have been seen (the first steps
 * of a run compile and warm caches). No lock: the ring's slots are claimed
 * by an atomic count, and a median read while another thread writes a slot
 * is off by one step at most. */
#include <stdio.h>
#include <string.h>

#include "base/gt_base.h"
#include "base/gt_config.h"
#include "hot/gt_steps.h"

#define GT_STEPS_KEPT 31
#define GT_STEPS_WARM 8

_Atomic int gt_steps_on;
static _Atomic int gt_steps_rule_on; /* a trigger rule is set */
static double gt_steps_factor;
static uint64_t gt_steps_cooldown_ns;
static char gt_steps_glob[128];
static void (*gt_steps_fire)(const char *why);

static _Atomic(uint64_t) gt_steps_ring[GT_STEPS_KEPT];
static _Atomic(uint64_t) gt_steps_count;
static _Atomic(uint64_t) gt_steps_next_allowed; /* CLOCK_MONOTONIC ns */
static char gt_steps_why[256];

/* A window by steps: 0 idle, 1 armed (waiting for a step to start),
 * 2 counting the steps inside it, 3 done. */
static _Atomic int gt_steps_arm_state;
static _Atomic(uint64_t) gt_steps_arm_left, gt_steps_arm_done;
static void (*_Atomic gt_steps_bound)(int end, uint64_t t_ns);

static GT_TLS int gt_steps_depth;          /* pushes open on this thread */
static GT_TLS int gt_steps_open_depth = -1; /* the depth its step was pushed at */
static GT_TLS uint64_t gt_steps_open_ns, gt_steps_open_id, gt_steps_id_ns;

void gt_steps_configure(double factor, uint64_t cooldown_ns, const char *glob, void (*fire)(const char *why))
{
    gt_steps_factor = factor;
    gt_steps_cooldown_ns = cooldown_ns;
    snprintf(gt_steps_glob, sizeof(gt_steps_glob), "%s", glob ? glob : "");
    gt_steps_fire = fire;
    atomic_store(&gt_steps_rule_on, factor > 0 && fire);
    atomic_store(&gt_steps_on, factor > 0 && fire);
}

void gt_steps_off(void)
{
    atomic_store(&gt_steps_rule_on, 0);
    atomic_store(&gt_steps_arm_state, 0);
    atomic_store(&gt_steps_on, 0);
}

void gt_steps_arm(uint64_t nsteps, void (*bound)(int end, uint64_t t_ns))
{
    atomic_store(&gt_steps_bound, bound);
    atomic_store(&gt_steps_arm_left, nsteps);
    atomic_store(&gt_steps_arm_done, 0);
    atomic_store(&gt_steps_arm_state, 1);
    atomic_store(&gt_steps_on, 1);
}

uint64_t gt_steps_disarm(void)
{
    atomic_store(&gt_steps_arm_state, 0);
    atomic_store(&gt_steps_on, atomic_load(&gt_steps_rule_on));
    return atomic_load(&gt_steps_arm_done);
}

/* A step starts or ends, for a window by steps. */
static void gt_steps_armed_start(uint64_t t)
{
    int one = 1;
    if (atomic_load_explicit(&gt_steps_arm_state, memory_order_relaxed) == 1 &&
        atomic_compare_exchange_strong(&gt_steps_arm_state, &one, 2))
        atomic_load(&gt_steps_bound)(0, t);
}

static void gt_steps_armed_end(uint64_t t)
{
    if (atomic_load_explicit(&gt_steps_arm_state, memory_order_relaxed) != 2)
        return;
    atomic_fetch_add(&gt_steps_arm_done, 1);
    int two = 2;
    if (atomic_fetch_sub(&gt_steps_arm_left, 1) == 1 && atomic_compare_exchange_strong(&gt_steps_arm_state, &two, 3))
        atomic_load(&gt_steps_bound)(1, t);
}

static uint64_t gt_steps_median(uint64_t n)
{
    uint64_t v[GT_STEPS_KEPT];
    size_t k = n < GT_STEPS_KEPT ? (size_t)n : GT_STEPS_KEPT;
    for (size_t i = 0; i < k; i++)
        v[i] = atomic_load_explicit(&gt_steps_ring[i], memory_order_relaxed);
    for (size_t i = 1; i < k; i++) /* insertion sort: 31 values */
        for (size_t j = i; j > 0 && v[j - 1] > v[j]; j--) {
            uint64_t t = v[j];
            v[j] = v[j - 1];
            v[j - 1] = t;
        }
    return v[k / 2];
}

static void gt_steps_ended(uint64_t start_ns)
{
    uint64_t now = gt_now_ns(), d = now - start_ns;
    gt_steps_armed_end(now);
    uint64_t n = atomic_load_explicit(&gt_steps_count, memory_order_relaxed);
    if (n >= GT_STEPS_WARM && atomic_load_explicit(&gt_steps_rule_on, memory_order_relaxed)) {
        uint64_t med = gt_steps_median(n);
        uint64_t next = atomic_load_explicit(&gt_steps_next_allowed, memory_order_relaxed);
        if (med && (double)d > gt_steps_factor * (double)med && now >= next &&
            atomic_compare_exchange_strong(&gt_steps_next_allowed, &next, now + gt_steps_cooldown_ns)) {
            snprintf(gt_steps_why, sizeof(gt_steps_why),
                     "step-time>%gx: a step of %.3f ms ended at %llu ns, %.1fx the median %.3f ms of the last %llu",
                     gt_steps_factor, (double)d / 1e6, (unsigned long long)now, (double)d / (double)med,
                     (double)med / 1e6, (unsigned long long)(n < GT_STEPS_KEPT ? n : GT_STEPS_KEPT));
            gt_steps_fire(gt_steps_why);
        }
    }
    /* Judged against the steps before it, then kept. */
    n = atomic_fetch_add_explicit(&gt_steps_count, 1, memory_order_relaxed);
    atomic_store_explicit(&gt_steps_ring[n % GT_STEPS_KEPT], d, memory_order_relaxed);
}

void gt_steps_push(const char *name)
{
    int depth = gt_steps_depth++;
    if (gt_steps_open_depth >= 0)
        return; /* ranges inside a step */
    if (name && gt_is_step_name(name, gt_steps_glob)) {
        gt_steps_open_depth = depth;
        gt_steps_open_ns = gt_now_ns();
        gt_steps_armed_start(gt_steps_open_ns);
    }
}

void gt_steps_pop(void)
{
    if (gt_steps_depth > 0)
        gt_steps_depth--;
    if (gt_steps_open_depth >= 0 && gt_steps_depth == gt_steps_open_depth) {
        gt_steps_open_depth = -1;
        gt_steps_ended(gt_steps_open_ns);
    }
}

void gt_steps_start(uint64_t id, const char *name)
{
    if (id && name && gt_is_step_name(name, gt_steps_glob)) {
        gt_steps_open_id = id;
        gt_steps_id_ns = gt_now_ns();
        gt_steps_armed_start(gt_steps_id_ns);
    }
}

void gt_steps_end(uint64_t id)
{
    /* A step ended on another thread than it started on is not timed. */
    if (id && id == gt_steps_open_id) {
        gt_steps_open_id = 0;
        gt_steps_ended(gt_steps_id_ns);
    }
}

uint64_t gt_steps_seen(void)
{
    return atomic_load(&gt_steps_count);
}
