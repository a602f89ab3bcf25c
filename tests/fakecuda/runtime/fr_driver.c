/* fr_driver.c: loading the driver as the real runtime does, the primary
 * context per thread, and error bookkeeping. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "fr_runtime.h"

static struct fr_driver fr_default, fr_per_thread;
static void *fr_handle;
static CUresult fr_load_result = CUDA_ERROR_NOT_INITIALIZED;
static pthread_once_t fr_once = PTHREAD_ONCE_INIT;
static __thread int fr_tls_ready;
static __thread int fr_tls_device;
static __thread cudaError_t fr_tls_error;

static void fr_load(void)
{
    fr_handle = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!fr_handle) {
        fr_load_result = CUDA_ERROR_NOT_FOUND;
        return;
    }
    typedef CUresult (*proc_fn)(const char *, void **, int, cuuint64_t, CUdriverProcAddressQueryResult *);
    proc_fn get = (proc_fn)dlsym(fr_handle, "cuGetProcAddress_v2");
    if (!get) {
        fr_load_result = CUDA_ERROR_NOT_FOUND;
        return;
    }
    CUdriverProcAddressQueryResult st;
#define FR_GET(field, fn, name)                                                                      \
    get(name, (void **)&fr_default.field, 13000, CU_GET_PROC_ADDRESS_DEFAULT, &st);                  \
    get(name, (void **)&fr_per_thread.field, 13000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, &st);
    FR_DRIVER_ENTRIES(FR_GET)
#undef FR_GET
    if (!fr_default.init) {
        fr_load_result = CUDA_ERROR_NOT_FOUND;
        return;
    }
    fr_load_result = fr_default.init(0);
}

const struct fr_driver *fr_drv(int per_thread)
{
    return per_thread ? &fr_per_thread : &fr_default;
}

void *fr_driver_symbol(const char *name)
{
    pthread_once(&fr_once, fr_load);
    return fr_handle ? dlsym(fr_handle, name) : NULL;
}

cudaError_t fr_error(CUresult r)
{
    switch (r) {
    case CUDA_SUCCESS: return cudaSuccess;
    case CUDA_ERROR_INVALID_VALUE: return cudaErrorInvalidValue;
    case CUDA_ERROR_OUT_OF_MEMORY: return cudaErrorMemoryAllocation;
    case CUDA_ERROR_NOT_INITIALIZED: return cudaErrorInitializationError;
    case CUDA_ERROR_INVALID_DEVICE: return cudaErrorInvalidDevice;
    case CUDA_ERROR_INVALID_CONTEXT: return cudaErrorDeviceUninitialized;
    case CUDA_ERROR_INVALID_HANDLE: return cudaErrorInvalidResourceHandle;
    case CUDA_ERROR_NOT_FOUND: return cudaErrorSymbolNotFound;
    case CUDA_ERROR_NOT_READY: return cudaErrorNotReady;
    case CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED: return cudaErrorHostMemoryAlreadyRegistered;
    case CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED: return cudaErrorHostMemoryNotRegistered;
    case CUDA_ERROR_NOT_SUPPORTED: return cudaErrorNotSupported;
    case CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED: return cudaErrorPeerAccessAlreadyEnabled;
    case CUDA_ERROR_PEER_ACCESS_NOT_ENABLED: return cudaErrorPeerAccessNotEnabled;
    case CUDA_ERROR_ASSERT: return cudaErrorAssert;
    case CUDA_ERROR_LAUNCH_FAILED: return cudaErrorLaunchFailure;
    case CUDA_ERROR_ILLEGAL_ADDRESS: return cudaErrorIllegalAddress;
    case CUDA_ERROR_ILLEGAL_STATE: return cudaErrorIllegalState;
    case CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED: return cudaErrorStreamCaptureUnsupported;
    case CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE: return cudaErrorGraphExecUpdateFailure;
    default: return cudaErrorUnknown;
    }
}

cudaError_t fr_set_error(cudaError_t e)
{
    if (e != cudaSuccess && e != cudaErrorNotReady)
        fr_tls_error = e;
    return e;
}

cudaError_t fr_ready(void)
{
    if (fr_tls_ready)
        return cudaSuccess;
    pthread_once(&fr_once, fr_load);
    if (fr_load_result != CUDA_SUCCESS)
        return fr_set_error(fr_load_result == CUDA_ERROR_NOT_FOUND ? cudaErrorInsufficientDriver
                                                                   : fr_error(fr_load_result));
    CUdevice dev;
    CUcontext ctx;
    CUresult r = fr_default.deviceGet(&dev, fr_tls_device);
    if (r == CUDA_SUCCESS)
        r = fr_default.primaryCtxRetain(&ctx, dev);
    if (r == CUDA_SUCCESS)
        r = fr_default.ctxSetCurrent(ctx);
    if (r != CUDA_SUCCESS)
        return fr_set_error(fr_error(r));
    fr_tls_ready = 1;
    return cudaSuccess;
}

int fr_current_device(void)
{
    return fr_tls_device;
}

FR_API cudaError_t cudaSetDevice(int device)
{
    int n = 0;
    pthread_once(&fr_once, fr_load);
    if (fr_load_result != CUDA_SUCCESS)
        return fr_set_error(cudaErrorInsufficientDriver);
    fr_default.deviceGetCount(&n);
    if (device < 0 || device >= n)
        return fr_set_error(cudaErrorInvalidDevice);
    fr_tls_device = device;
    fr_tls_ready = 0;
    return fr_ready();
}

FR_API cudaError_t cudaGetDevice(int *device)
{
    if (!device)
        return fr_set_error(cudaErrorInvalidValue);
    *device = fr_tls_device;
    return cudaSuccess;
}

FR_API cudaError_t cudaGetLastError(void)
{
    cudaError_t e = fr_tls_error;
    fr_tls_error = cudaSuccess;
    return e;
}

FR_API cudaError_t cudaPeekAtLastError(void)
{
    return fr_tls_error;
}

FR_API const char *cudaGetErrorName(cudaError_t e)
{
    switch (e) {
    case cudaSuccess: return "cudaSuccess";
    case cudaErrorInvalidValue: return "cudaErrorInvalidValue";
    case cudaErrorMemoryAllocation: return "cudaErrorMemoryAllocation";
    case cudaErrorInitializationError: return "cudaErrorInitializationError";
    case cudaErrorInvalidDevice: return "cudaErrorInvalidDevice";
    case cudaErrorInvalidResourceHandle: return "cudaErrorInvalidResourceHandle";
    case cudaErrorInvalidDeviceFunction: return "cudaErrorInvalidDeviceFunction";
    case cudaErrorNotReady: return "cudaErrorNotReady";
    case cudaErrorInsufficientDriver: return "cudaErrorInsufficientDriver";
    case cudaErrorSymbolNotFound: return "cudaErrorSymbolNotFound";
    case cudaErrorNotSupported: return "cudaErrorNotSupported";
    case cudaErrorPeerAccessAlreadyEnabled: return "cudaErrorPeerAccessAlreadyEnabled";
    case cudaErrorPeerAccessNotEnabled: return "cudaErrorPeerAccessNotEnabled";
    case cudaErrorAssert: return "cudaErrorAssert";
    case cudaErrorLaunchFailure: return "cudaErrorLaunchFailure";
    case cudaErrorIllegalAddress: return "cudaErrorIllegalAddress";
    case cudaErrorInvalidConfiguration: return "cudaErrorInvalidConfiguration";
    case cudaErrorIllegalState: return "cudaErrorIllegalState";
    case cudaErrorStreamCaptureUnsupported: return "cudaErrorStreamCaptureUnsupported";
    case cudaErrorGraphExecUpdateFailure: return "cudaErrorGraphExecUpdateFailure";
    default: return "cudaErrorUnknown";
    }
}

FR_API const char *cudaGetErrorString(cudaError_t e)
{
    switch (e) {
    case cudaSuccess: return "no error";
    case cudaErrorInvalidValue: return "invalid argument";
    case cudaErrorMemoryAllocation: return "out of memory";
    case cudaErrorInitializationError: return "initialization error";
    case cudaErrorInvalidDevice: return "invalid device ordinal";
    case cudaErrorInvalidResourceHandle: return "invalid resource handle";
    case cudaErrorInvalidDeviceFunction: return "invalid device function";
    case cudaErrorNotReady: return "device not ready";
    case cudaErrorInsufficientDriver: return "CUDA driver version is insufficient for CUDA runtime version";
    case cudaErrorNotSupported: return "operation not supported";
    case cudaErrorPeerAccessAlreadyEnabled: return "peer access is already enabled";
    case cudaErrorPeerAccessNotEnabled: return "peer access has not been enabled";
    case cudaErrorAssert: return "device-side assert triggered";
    case cudaErrorLaunchFailure: return "unspecified launch failure";
    case cudaErrorIllegalAddress: return "an illegal memory access was encountered";
    default: return "unknown error";
    }
}

FR_API cudaError_t cudaDriverGetVersion(int *v)
{
    if (!v)
        return fr_set_error(cudaErrorInvalidValue);
    *v = fr_ready() == cudaSuccess ? 13000 : 0;
    return cudaSuccess;
}

FR_API cudaError_t cudaRuntimeGetVersion(int *v)
{
    if (!v)
        return fr_set_error(cudaErrorInvalidValue);
    *v = 13000;
    return cudaSuccess;
}

FR_API cudaError_t cudaGetDeviceCount(int *n)
{
    if (!n)
        return fr_set_error(cudaErrorInvalidValue);
    pthread_once(&fr_once, fr_load);
    if (fr_load_result != CUDA_SUCCESS) {
        *n = 0;
        return fr_set_error(cudaErrorNoDevice);
    }
    return fr_set_error(fr_error(fr_default.deviceGetCount(n)));
}

FR_API cudaError_t cudaGetDeviceProperties(struct cudaDeviceProp *p, int device)
{
    if (!p)
        return fr_set_error(cudaErrorInvalidValue);
    cudaError_t e = fr_ready();
    if (e)
        return e;
    memset(p, 0, sizeof(*p));
    fr_default.deviceGetName(p->name, sizeof(p->name), device);
    fr_default.deviceTotalMem(&p->totalGlobalMem, device);
    fr_default.deviceGetAttribute(&p->major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, device);
    fr_default.deviceGetAttribute(&p->minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, device);
    fr_default.deviceGetAttribute(&p->multiProcessorCount, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, device);
    fr_default.deviceGetAttribute(&p->warpSize, CU_DEVICE_ATTRIBUTE_WARP_SIZE, device);
    fr_default.deviceGetAttribute(&p->maxThreadsPerBlock, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, device);
    p->sharedMemPerBlock = 49152;
    p->maxThreadsDim[0] = p->maxThreadsDim[1] = 1024;
    p->maxThreadsDim[2] = 64;
    p->maxGridSize[0] = 2147483647;
    p->maxGridSize[1] = p->maxGridSize[2] = 65535;
    p->unifiedAddressing = 1;
    p->concurrentKernels = 1;
    p->canMapHostMemory = 1;
    p->managedMemory = 1;
    p->concurrentManagedAccess = 1;
    p->asyncEngineCount = 2;
    p->cooperativeLaunch = 1;
    p->streamPrioritiesSupported = 1;
    fr_default.deviceGetAttribute(&p->pciBusID, CU_DEVICE_ATTRIBUTE_PCI_BUS_ID, device);
    fr_default.deviceGetAttribute(&p->pciDeviceID, CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID, device);
    fr_default.deviceGetAttribute(&p->pciDomainID, CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID, device);
    fr_default.deviceGetUuid((CUuuid *)&p->uuid, device);
    fr_default.deviceGetAttribute(&p->maxThreadsPerMultiProcessor, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR,
                                  device);
    fr_default.deviceGetAttribute(&p->maxBlocksPerMultiProcessor, CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR,
                                  device);
    fr_default.deviceGetAttribute(&p->regsPerBlock, CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK, device);
    fr_default.deviceGetAttribute(&p->regsPerMultiprocessor, CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR,
                                  device);
    fr_default.deviceGetAttribute(&p->l2CacheSize, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, device);
    fr_default.deviceGetAttribute(&p->memoryBusWidth, CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH, device);
    int v = 0;
    fr_default.deviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR, device);
    p->sharedMemPerMultiprocessor = (size_t)v;
    fr_default.deviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, device);
    p->sharedMemPerBlockOptin = (size_t)v;
    fr_default.deviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK, device);
    p->reservedSharedMemPerBlock = (size_t)v;
    p->totalConstMem = 65536;
    p->warpSize = p->warpSize ? p->warpSize : 32;
    return cudaSuccess;
}

FR_API cudaError_t cudaDeviceGetAttribute(int *v, enum cudaDeviceAttr a, int device)
{
    cudaError_t e = fr_ready();
    if (e)
        return e;
    /* The runtime's attribute numbers are the driver's. */
    return fr_set_error(fr_error(fr_default.deviceGetAttribute(v, (CUdevice_attribute)a, device)));
}

/* Waits for the device and resets its primary context, which clears a
 * device-side error. */
FR_API cudaError_t cudaDeviceReset(void)
{
    pthread_once(&fr_once, fr_load);
    if (fr_load_result != CUDA_SUCCESS)
        return fr_set_error(cudaErrorInsufficientDriver);
    cudaError_t e = fr_set_error(fr_error(fr_default.primaryCtxReset(fr_tls_device)));
    if (e == cudaSuccess)
        fr_tls_error = cudaSuccess;
    return e;
}

/* The simulated driver's fakecuda_runtime_api, found once. */
static void (*fr_rt_api(void))(const char *, int)
{
    static void (*fn)(const char *, int);
    static int looked;
    if (!__atomic_load_n(&looked, __ATOMIC_ACQUIRE)) {
        void (*f)(const char *, int) = (void (*)(const char *, int))fr_driver_symbol("fakecuda_runtime_api");
        __atomic_store_n(&fn, f, __ATOMIC_RELAXED);
        __atomic_store_n(&looked, 1, __ATOMIC_RELEASE);
    }
    return __atomic_load_n(&fn, __ATOMIC_RELAXED);
}

void fr_rt_enter(const char *api)
{
    void (*f)(const char *, int) = fr_rt_api();
    if (f)
        f(api, 1);
}

void fr_rt_leave(void)
{
    void (*f)(const char *, int) = fr_rt_api();
    if (f)
        f(NULL, 0);
}

FR_API cudaError_t cudaDeviceSynchronize(void)
{
    cudaError_t e = fr_ready();
    if (e)
        return e;
    fr_rt_enter("cudaDeviceSynchronize_v3020");
    CUresult r = fr_default.ctxSynchronize();
    fr_rt_leave();
    return fr_set_error(fr_error(r));
}

static cudaError_t fr_entry_point(const char *symbol, void **fn, unsigned version, unsigned long long flags,
                                  enum cudaDriverEntryPointQueryResult *status)
{
    cudaError_t e = fr_ready();
    if (e)
        return e;
    if (!symbol || !fn)
        return fr_set_error(cudaErrorInvalidValue);
    CUdriverProcAddressQueryResult st = CU_GET_PROC_ADDRESS_SUCCESS;
    CUresult r = fr_default.getProcAddress(symbol, fn, (int)version, flags, &st);
    if (status)
        *status = (enum cudaDriverEntryPointQueryResult)st;
    /* A symbol the driver lacks is no error: success with a NULL pointer
     * and the status saying so, as NVIDIA documents (PyTorch asks for
     * functions it can live without and would fail on a sticky error). */
    if (r == CUDA_ERROR_NOT_FOUND) {
        *fn = NULL;
        return cudaSuccess;
    }
    return fr_set_error(fr_error(r));
}

FR_API cudaError_t cudaGetDriverEntryPoint(const char *symbol, void **fn, unsigned long long flags,
                                           enum cudaDriverEntryPointQueryResult *status)
{
    return fr_entry_point(symbol, fn, 13000, flags, status);
}

FR_API cudaError_t cudaGetDriverEntryPoint_ptsz(const char *symbol, void **fn, unsigned long long flags,
                                                enum cudaDriverEntryPointQueryResult *status)
{
    return fr_entry_point(symbol, fn, 13000, flags, status);
}

FR_API cudaError_t cudaGetDriverEntryPointByVersion(const char *symbol, void **fn, unsigned int version,
                                                    unsigned long long flags,
                                                    enum cudaDriverEntryPointQueryResult *status)
{
    return fr_entry_point(symbol, fn, version, flags, status);
}

FR_API cudaError_t cudaGetDriverEntryPointByVersion_ptsz(const char *symbol, void **fn, unsigned int version,
                                                         unsigned long long flags,
                                                         enum cudaDriverEntryPointQueryResult *status)
{
    return fr_entry_point(symbol, fn, version, flags, status);
}

/* Through the driver's, as the real runtime's do. */
FR_API cudaError_t cudaProfilerStart(void)
{
    READY();
    RET(fr_drv(0)->profilerStart());
}

FR_API cudaError_t cudaProfilerStop(void)
{
    READY();
    RET(fr_drv(0)->profilerStop());
}
