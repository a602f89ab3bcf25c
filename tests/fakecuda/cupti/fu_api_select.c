/* fu_api_select.c: which driver and runtime functions get API records.
 *
 * CUPTI makes an external-correlation record only beside an API record
 * (cuptiActivityPushExternalCorrelationId: "when a CUPTI activity API
 * record is created while within an external API region"), so a tool
 * that links the GPU's records to its own calls through external ids must
 * turn API records on: every function (CUPTI_ACTIVITY_KIND_DRIVER or
 * _RUNTIME) or chosen ones (cuptiActivityEnableDriverApi/RuntimeApi, by
 * callback id; cuptiGetCallbackName names the ids). The simulated driver
 * names each call as CUPTI's driver callback ids spell it; the simulated
 * runtime makes its work through the driver, so its calls' records are
 * the driver calls' (tests/fakecuda/README.md). */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "fu_api_select.h"
#include "fu_cbids.h"

#define FU_API __attribute__((visibility("default")))

static _Atomic unsigned char fu_driver_on[FU_DRIVER_CBID_NAMES_N];
static _Atomic unsigned char fu_runtime_on[FU_RUNTIME_CBID_NAMES_N];

/* Callback ids sorted by name, one index a domain, for the calls the
 * simulated driver and runtime name. */
struct fu_index {
    const char *const *names;
    size_t size, n;
    uint32_t *ids;
    pthread_once_t once;
};

static uint32_t fu_drv_ids[FU_DRIVER_CBID_NAMES_N], fu_rt_ids[FU_RUNTIME_CBID_NAMES_N];
static struct fu_index fu_drv_index = {fu_driver_cbid_names, FU_DRIVER_CBID_NAMES_N, 0, fu_drv_ids,
                                       PTHREAD_ONCE_INIT};
static struct fu_index fu_rt_index = {fu_runtime_cbid_names, FU_RUNTIME_CBID_NAMES_N, 0, fu_rt_ids,
                                      PTHREAD_ONCE_INIT};
static int fu_cmp_name(const void *a, const void *b, void *names)
{
    const char *const *n = names;
    return strcmp(n[*(const uint32_t *)a], n[*(const uint32_t *)b]);
}

/* The two indexes may be built at once on two threads: the names go to
 * the comparison through qsort_r, not a shared variable. */
static void fu_build(struct fu_index *x)
{
    for (uint32_t i = 0; i < x->size; i++)
        if (x->names[i])
            x->ids[x->n++] = i;
    qsort_r(x->ids, x->n, sizeof(x->ids[0]), fu_cmp_name, (void *)x->names);
}

static void fu_build_drv(void) { fu_build(&fu_drv_index); }
static void fu_build_rt(void) { fu_build(&fu_rt_index); }

static uint32_t fu_lookup(struct fu_index *x, const char *api)
{
    pthread_once(&x->once, x == &fu_drv_index ? fu_build_drv : fu_build_rt);
    size_t lo = 0, hi = x->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        int c = strcmp(x->names[x->ids[mid]], api);
        if (c == 0)
            return x->ids[mid];
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return 0;
}

int fu_api_selected(const char *api, uint32_t *cbid, CUpti_ActivityKind *kind)
{
    /* the runtime's calls are named as its callback ids are: "cuda..." */
    int rt = api && strncmp(api, "cuda", 4) == 0;
    uint32_t id = api ? fu_lookup(rt ? &fu_rt_index : &fu_drv_index, api) : 0;
    if (cbid)
        *cbid = id;
    if (kind)
        *kind = rt ? CUPTI_ACTIVITY_KIND_RUNTIME : CUPTI_ACTIVITY_KIND_DRIVER;
    return id && atomic_load_explicit(rt ? &fu_runtime_on[id] : &fu_driver_on[id], memory_order_relaxed);
}

void fu_api_select_all(CUpti_ActivityKind kind, int on)
{
    if (kind == CUPTI_ACTIVITY_KIND_DRIVER)
        for (size_t i = 0; i < FU_DRIVER_CBID_NAMES_N; i++)
            atomic_store(&fu_driver_on[i], (unsigned char)(on && fu_driver_cbid_names[i]));
    if (kind == CUPTI_ACTIVITY_KIND_RUNTIME)
        for (size_t i = 0; i < FU_RUNTIME_CBID_NAMES_N; i++)
            atomic_store(&fu_runtime_on[i], (unsigned char)(on && fu_runtime_cbid_names[i]));
}

FU_API CUptiResult cuptiActivityEnableDriverApi(CUpti_CallbackId cbid, uint8_t enable)
{
    if (cbid >= FU_DRIVER_CBID_NAMES_N || !fu_driver_cbid_names[cbid])
        return CUPTI_ERROR_INVALID_PARAMETER;
    atomic_store(&fu_driver_on[cbid], (unsigned char)!!enable);
    return CUPTI_SUCCESS;
}

FU_API CUptiResult cuptiActivityEnableRuntimeApi(CUpti_CallbackId cbid, uint8_t enable)
{
    if (cbid >= FU_RUNTIME_CBID_NAMES_N || !fu_runtime_cbid_names[cbid])
        return CUPTI_ERROR_INVALID_PARAMETER;
    atomic_store(&fu_runtime_on[cbid], (unsigned char)!!enable);
    return CUPTI_SUCCESS;
}

/* The driver's and the runtime's callback ids by name, as the toolkit's
 * headers declare them; other domains have none here. */
FU_API CUptiResult cuptiGetCallbackName(CUpti_CallbackDomain domain, uint32_t cbid, const char **name)
{
    if (!name)
        return CUPTI_ERROR_INVALID_PARAMETER;
    *name = NULL;
    if (domain == CUPTI_CB_DOMAIN_DRIVER_API && cbid < FU_DRIVER_CBID_NAMES_N)
        *name = fu_driver_cbid_names[cbid];
    else if (domain == CUPTI_CB_DOMAIN_RUNTIME_API && cbid < FU_RUNTIME_CBID_NAMES_N)
        *name = fu_runtime_cbid_names[cbid];
    return *name ? CUPTI_SUCCESS : CUPTI_ERROR_INVALID_PARAMETER;
}
