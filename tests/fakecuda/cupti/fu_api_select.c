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

/* Driver callback ids sorted by name, for the driver's calls. */
static uint32_t fu_by_name[FU_DRIVER_CBID_NAMES_N];
static size_t fu_nnames;
static pthread_once_t fu_index_once = PTHREAD_ONCE_INIT;

static int fu_cmp_name(const void *a, const void *b)
{
    return strcmp(fu_driver_cbid_names[*(const uint32_t *)a], fu_driver_cbid_names[*(const uint32_t *)b]);
}

static void fu_build_index(void)
{
    for (uint32_t i = 0; i < FU_DRIVER_CBID_NAMES_N; i++)
        if (fu_driver_cbid_names[i])
            fu_by_name[fu_nnames++] = i;
    qsort(fu_by_name, fu_nnames, sizeof(fu_by_name[0]), fu_cmp_name);
}

static uint32_t fu_driver_cbid(const char *api)
{
    pthread_once(&fu_index_once, fu_build_index);
    size_t lo = 0, hi = fu_nnames;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        int c = strcmp(fu_driver_cbid_names[fu_by_name[mid]], api);
        if (c == 0)
            return fu_by_name[mid];
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return 0;
}

int fu_api_driver_selected(const char *api, uint32_t *cbid)
{
    uint32_t id = api ? fu_driver_cbid(api) : 0;
    if (cbid)
        *cbid = id;
    return id && atomic_load_explicit(&fu_driver_on[id], memory_order_relaxed);
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
