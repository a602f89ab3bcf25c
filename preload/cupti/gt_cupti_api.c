/* gt_cupti_api.c: CUPTI's API records for the calls that make GPU work,
 * without which CUPTI writes no external-correlation record.
 *
 * The tracer ties each kernel, copy and memset to its call through the
 * external id it pushes around the call (hot/gt_call.h). CUPTI writes the
 * external-correlation record that carries the id only "when a CUPTI
 * activity API record is created" (cupti_activity.h): with no driver or
 * runtime API records on, a real GPU's records come with no link at all
 * (docs/validation.md, the first run). So API records are turned on for
 * every driver and runtime function (CUPTI_ACTIVITY_KIND_DRIVER and
 * _RUNTIME, as the PyTorch profiler asks for them), or, when asked, for
 * the functions that make work alone, chosen by name one callback id at a
 * time (cuptiActivityEnableDriverApi/RuntimeApi, CUPTI 12.6 onwards). The
 * writer skips API records; the program's own are forwarded to it
 * (gt_cupti_share.c). A statically linked runtime's work is tied to that
 * runtime's API record, made before the tracer's driver-level hook runs:
 * the id it takes is pushed ahead (gt_tls_ext_ahead, hot/gt_call.h). */
#include <stdlib.h>
#include <string.h>

#include "cupti/gt_cupti_app.h"
#include "cupti/gt_cupti_int.h"

/* Names of the functions that make GPU work or wait for it: launches
 * (graph launches too), copies, memsets, synchronizations and stream
 * waits (CUPTI's synchronization records), prefetches. */
static const char *const gt_work_words[] = {"Launch", "Memcpy", "Memset", "Synchronize", "WaitEvent", "Prefetch"};

/* Callback ids to try in each domain: the toolkit's count, and room for a
 * newer CUPTI's (ids are only ever added; a missing one is an error). */
#define GT_CBID_TRIES 2048

static _Atomic int gt_api_mode; /* 0: none, 1: chosen functions, 2: every function */

static CUpti_CallbackDomain gt_kind_domain(CUpti_ActivityKind kind)
{
    return kind == CUPTI_ACTIVITY_KIND_DRIVER ? CUPTI_CB_DOMAIN_DRIVER_API : CUPTI_CB_DOMAIN_RUNTIME_API;
}

static int gt_is_work(const char *name)
{
    for (size_t i = 0; i < sizeof(gt_work_words) / sizeof(gt_work_words[0]); i++)
        if (strstr(name, gt_work_words[i]))
            return 1;
    return 0;
}

/* The work-making functions of one domain turned on or off; how many. */
static int gt_select_domain(CUpti_CallbackDomain domain, int on)
{
    CUptiResult (*set)(CUpti_CallbackId, uint8_t) =
        domain == CUPTI_CB_DOMAIN_DRIVER_API ? gt_cu.enable_driver_api : gt_cu.enable_runtime_api;
    int n = 0;
    for (uint32_t id = 1; id < GT_CBID_TRIES; id++) {
        const char *name = NULL;
        if (gt_cu.callback_name(domain, id, &name) != CUPTI_SUCCESS || !name || !gt_is_work(name))
            continue;
        CUptiResult r = set(id, (uint8_t)on);
        if (r == CUPTI_SUCCESS)
            n++;
        gt_cupti_dump_note("%s api %u %s: %s -> %d", domain == CUPTI_CB_DOMAIN_DRIVER_API ? "driver" : "runtime", id,
                           name, on ? "on" : "off", (int)r);
    }
    return n;
}

const char *gt_cupti_api_records_on(void)
{
    /* Per function only when asked (GPUTRACE_CUPTI_API_RECORDS=work): on
     * an H100 (driver 580, CUPTI 13.0) the choices were accepted and made
     * no record at all once CUDA had started before the tracer, as in
     * PyTorch and a statically linked runtime (docs/validation.md). */
    const char *want = getenv("GPUTRACE_CUPTI_API_RECORDS");
    int work = want && strcmp(want, "work") == 0;
    if (work && gt_cu.enable_driver_api && gt_cu.enable_runtime_api && gt_cu.callback_name) {
        int n = gt_select_domain(CUPTI_CB_DOMAIN_DRIVER_API, 1) + gt_select_domain(CUPTI_CB_DOMAIN_RUNTIME_API, 1);
        if (n > 0) {
            gt_api_mode = 1;
            return "work_calls";
        }
    }
    int d = gt_cu.enable(CUPTI_ACTIVITY_KIND_DRIVER) == CUPTI_SUCCESS;
    int r = gt_cu.enable(CUPTI_ACTIVITY_KIND_RUNTIME) == CUPTI_SUCCESS;
    if (d)
        atomic_fetch_or(&gt_cupti_tracer_kinds, 1ull << CUPTI_ACTIVITY_KIND_DRIVER);
    if (r)
        atomic_fetch_or(&gt_cupti_tracer_kinds, 1ull << CUPTI_ACTIVITY_KIND_RUNTIME);
    gt_api_mode = d || r ? 2 : 0;
    return d && r ? "all_calls" : d ? "driver_calls" : r ? "runtime_calls" : "none";
}

void gt_cupti_api_records_off(int keep_driver, int keep_runtime)
{
    if (gt_api_mode == 1) {
        if (!keep_driver)
            gt_select_domain(CUPTI_CB_DOMAIN_DRIVER_API, 0);
        if (!keep_runtime)
            gt_select_domain(CUPTI_CB_DOMAIN_RUNTIME_API, 0);
    } else if (gt_api_mode == 2) {
        if (!keep_driver)
            gt_cu.disable(CUPTI_ACTIVITY_KIND_DRIVER);
        if (!keep_runtime)
            gt_cu.disable(CUPTI_ACTIVITY_KIND_RUNTIME);
        atomic_fetch_and(&gt_cupti_tracer_kinds,
                         ~((keep_driver ? 0 : 1ull << CUPTI_ACTIVITY_KIND_DRIVER) |
                           (keep_runtime ? 0 : 1ull << CUPTI_ACTIVITY_KIND_RUNTIME)));
    }
    gt_api_mode = 0;
}

void gt_cupti_api_records_reselect(CUpti_ActivityKind kind)
{
    /* Turning a whole kind off undoes every per-function choice in it. */
    if (gt_api_mode == 1 && (kind == CUPTI_ACTIVITY_KIND_DRIVER || kind == CUPTI_ACTIVITY_KIND_RUNTIME))
        gt_select_domain(gt_kind_domain(kind), 1);
}

/* ---- the program's own per-function choices (its calls to
 * cuptiActivityEnableDriverApi/RuntimeApi), for the forwarding: an API
 * record the tracer's choices made is the program's only where the
 * program chose that function too (or has the whole kind on). ---- */

static _Atomic(uint64_t) gt_app_sel[2][GT_CBID_TRIES / 64];
static _Atomic int gt_app_nsel;

/* The word of gt_app_sel that holds function `cbid` of kind DRIVER or
 * RUNTIME (cbid < GT_CBID_TRIES). */
static _Atomic(uint64_t) *gt_app_word(CUpti_ActivityKind kind, uint32_t cbid)
{
    return &gt_app_sel[kind == CUPTI_ACTIVITY_KIND_DRIVER ? 0 : 1][cbid / 64];
}

int gt_cupti_api_app_selected(CUpti_ActivityKind kind, uint32_t cbid)
{
    if (cbid >= GT_CBID_TRIES)
        return 0;
    return (int)((atomic_load(gt_app_word(kind, cbid)) >> (cbid % 64)) & 1);
}

int gt_cupti_api_app_any(void)
{
    return atomic_load(&gt_app_nsel) > 0;
}

CUptiResult gt_cupti_app_enable_api(void *real, CUpti_ActivityKind kind, CUpti_CallbackId cbid, uint8_t on)
{
    CUptiResult (*fn)(CUpti_CallbackId, uint8_t) = (CUptiResult(*)(CUpti_CallbackId, uint8_t))real;
    int tracer_needs = 0;
    if (atomic_load(&gt_cupti_holding) && gt_api_mode == 1 && gt_cu.callback_name) {
        const char *name = NULL;
        tracer_needs = gt_cu.callback_name(gt_kind_domain(kind), cbid, &name) == CUPTI_SUCCESS && name &&
                       gt_is_work(name);
    }
    /* Turning off a function the tracer links by stays the program's
     * choice alone: its records of it are no longer forwarded. */
    CUptiResult r = (!on && tracer_needs) ? CUPTI_SUCCESS : fn ? fn(cbid, on) : CUPTI_ERROR_NOT_INITIALIZED;
    if (r != CUPTI_SUCCESS || cbid >= GT_CBID_TRIES)
        return r;
    uint64_t bit = 1ull << (cbid % 64);
    uint64_t was = on ? atomic_fetch_or(gt_app_word(kind, cbid), bit)
                      : atomic_fetch_and(gt_app_word(kind, cbid), ~bit);
    if (on && !(was & bit))
        atomic_fetch_add(&gt_app_nsel, 1);
    if (!on && (was & bit))
        atomic_fetch_sub(&gt_app_nsel, 1);
    return r;
}
