/* fn_nvml.c: the simulated NVML (libnvidia-ml.so.1): the few functions a
 * tracer asks of it, with NVML's own ABI (no nvml.h in the toolkit here;
 * the types below are NVML's, as its documentation gives them).
 *
 * Utilization is what NVML defines it to be: the percent of a recent
 * period during which one or more kernels ran on the device; the period
 * is one second here (NVML's is between 1/6 s and 1 s, by product). The
 * simulated GPU keeps the kernels' intervals (fakecuda_busy_ns).
 *
 * FAKECUDA_NVML=uninitialized makes nvmlInit_v2 fail as it does on a
 * machine whose driver is not loaded. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fakecuda.h"

#define FN_API __attribute__((visibility("default")))

typedef int nvmlReturn_t;
enum { NVML_SUCCESS = 0, NVML_ERROR_UNINITIALIZED = 1, NVML_ERROR_INVALID_ARGUMENT = 2,
       NVML_ERROR_NOT_FOUND = 6, NVML_ERROR_DRIVER_NOT_LOADED = 9 };

struct nvmlDevice_st {
    int index;
};
typedef struct nvmlDevice_st *nvmlDevice_t;

typedef struct nvmlUtilization_st {
    unsigned int gpu;
    unsigned int memory;
} nvmlUtilization_t;

#define FN_MAX_DEVICES 8
static struct nvmlDevice_st fn_devices[FN_MAX_DEVICES] = {{0}, {1}, {2}, {3}, {4}, {5}, {6}, {7}};
static int fn_inits;

static int fn_device_count(void)
{
    const char *v = getenv("FAKECUDA_DEVICES");
    int n = v && *v ? atoi(v) : 1;
    return n < 1 ? 1 : n > FN_MAX_DEVICES ? FN_MAX_DEVICES : n;
}

FN_API nvmlReturn_t nvmlInit_v2(void)
{
    const char *v = getenv("FAKECUDA_NVML");
    if (v && strcmp(v, "uninitialized") == 0)
        return NVML_ERROR_DRIVER_NOT_LOADED;
    __atomic_add_fetch(&fn_inits, 1, __ATOMIC_RELAXED);
    return NVML_SUCCESS;
}

FN_API nvmlReturn_t nvmlShutdown(void)
{
    if (__atomic_load_n(&fn_inits, __ATOMIC_RELAXED) <= 0)
        return NVML_ERROR_UNINITIALIZED;
    __atomic_sub_fetch(&fn_inits, 1, __ATOMIC_RELAXED);
    return NVML_SUCCESS;
}

FN_API const char *nvmlErrorString(nvmlReturn_t r)
{
    switch (r) {
    case NVML_SUCCESS: return "Success";
    case NVML_ERROR_UNINITIALIZED: return "Uninitialized";
    case NVML_ERROR_INVALID_ARGUMENT: return "Invalid Argument";
    case NVML_ERROR_NOT_FOUND: return "Not Found";
    case NVML_ERROR_DRIVER_NOT_LOADED: return "Driver Not Loaded";
    default: return "Unknown Error";
    }
}

FN_API nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *count)
{
    if (__atomic_load_n(&fn_inits, __ATOMIC_RELAXED) <= 0)
        return NVML_ERROR_UNINITIALIZED;
    if (!count)
        return NVML_ERROR_INVALID_ARGUMENT;
    *count = (unsigned)fn_device_count();
    return NVML_SUCCESS;
}

/* "domain:bus:device.function", hexadecimal, as cuDeviceGetPCIBusId gives it. */
FN_API nvmlReturn_t nvmlDeviceGetHandleByPciBusId_v2(const char *bus, nvmlDevice_t *device)
{
    if (__atomic_load_n(&fn_inits, __ATOMIC_RELAXED) <= 0)
        return NVML_ERROR_UNINITIALIZED;
    unsigned dom, b, dev, fn;
    if (!bus || !device || sscanf(bus, "%x:%x:%x.%x", &dom, &b, &dev, &fn) != 4)
        return NVML_ERROR_INVALID_ARGUMENT;
    int i = (int)b - FAKECUDA_FIRST_BUS;
    if (dom || dev || fn || i < 0 || i >= fn_device_count())
        return NVML_ERROR_NOT_FOUND;
    *device = &fn_devices[i];
    return NVML_SUCCESS;
}

FN_API nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t device, nvmlUtilization_t *u)
{
    if (__atomic_load_n(&fn_inits, __ATOMIC_RELAXED) <= 0)
        return NVML_ERROR_UNINITIALIZED;
    if (!u || device < fn_devices || device >= fn_devices + FN_MAX_DEVICES)
        return NVML_ERROR_INVALID_ARGUMENT;
    const uint64_t period = 1000000000ull;
    uint64_t now = fakecuda_now_ns();
    uint64_t busy = fakecuda_busy_ns(device->index, now > period ? now - period : 0, now);
    u->gpu = (unsigned)((busy * 100 + period / 2) / period);
    u->memory = 0;
    return NVML_SUCCESS;
}
