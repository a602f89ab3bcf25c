/* fu_cupti_config.c: the Activity API's settings that PyTorch's profiler
 * (Kineto) makes before it enables records. They tune what a real GPU
 * keeps on the device (record buffers, semaphore pools, event timestamps):
 * the simulated CUPTI keeps its records on the host, so each is checked
 * as CUPTI checks it and then has nothing to change. Which functions get
 * API records is fu_api_select.c's. */
#include <stddef.h>
#include <stdint.h>

#include <cupti.h>

#define FU_API __attribute__((visibility("default")))

FU_API CUptiResult cuptiActivitySetAttribute(CUpti_ActivityAttribute attr, size_t *size, void *value)
{
    if (!size || !value)
        return CUPTI_ERROR_INVALID_PARAMETER;
    switch ((int)attr) {
    case CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_SIZE:
    case CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_SIZE_CDP:
    case CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_POOL_LIMIT:
    case CUPTI_ACTIVITY_ATTR_PROFILING_SEMAPHORE_POOL_SIZE:
    case CUPTI_ACTIVITY_ATTR_PROFILING_SEMAPHORE_POOL_LIMIT:
    case CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_PRE_ALLOCATE_VALUE:
    case CUPTI_ACTIVITY_ATTR_PROFILING_SEMAPHORE_PRE_ALLOCATE_VALUE:
    case CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_SIZE_DEVICE_GRAPHS:
        return *size == sizeof(size_t) ? CUPTI_SUCCESS : CUPTI_ERROR_INVALID_PARAMETER;
    case CUPTI_ACTIVITY_ATTR_ZEROED_OUT_ACTIVITY_BUFFER:
    case CUPTI_ACTIVITY_ATTR_MEM_ALLOCATION_TYPE_HOST_PINNED:
    case CUPTI_ACTIVITY_ATTR_PER_THREAD_ACTIVITY_BUFFER:
        return *size == sizeof(uint8_t) ? CUPTI_SUCCESS : CUPTI_ERROR_INVALID_PARAMETER;
    default:
        return CUPTI_ERROR_INVALID_PARAMETER;
    }
}

/* Device-side timestamps for event records (CUPTI_ACTIVITY_KIND_CUDA_EVENT,
 * which the simulated CUPTI does not make). */
FU_API CUptiResult cuptiActivityEnableCudaEventDeviceTimestamps(uint8_t enable)
{
    (void)enable;
    return CUPTI_SUCCESS;
}
