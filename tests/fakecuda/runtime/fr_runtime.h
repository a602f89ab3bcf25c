/* fr_runtime.h: internals of the simulated CUDA runtime. Like the real
 * one, it reaches the driver only through dlopen("libcuda.so.1") and
 * cuGetProcAddress. */
#ifndef FR_RUNTIME_H
#define FR_RUNTIME_H

#include <cuda.h>
#include <cuda_runtime_api.h>
#include <cudaProfiler.h>

#define FR_API __attribute__((visibility("default")))

/* The driver entry points the runtime uses: field, declared function (for
 * its type), name asked of cuGetProcAddress. */
#define FR_DRIVER_ENTRIES(X)                                   \
    X(init, cuInit, "cuInit")                                  \
    X(deviceGet, cuDeviceGet, "cuDeviceGet")                   \
    X(deviceGetCount, cuDeviceGetCount, "cuDeviceGetCount")    \
    X(deviceGetName, cuDeviceGetName, "cuDeviceGetName")       \
    X(deviceGetAttribute, cuDeviceGetAttribute, "cuDeviceGetAttribute") \
    X(deviceTotalMem, cuDeviceTotalMem_v2, "cuDeviceTotalMem") \
    X(deviceGetUuid, cuDeviceGetUuid_v2, "cuDeviceGetUuid") \
    X(primaryCtxRetain, cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain") \
    X(ctxSetCurrent, cuCtxSetCurrent, "cuCtxSetCurrent")       \
    X(ctxSynchronize, cuCtxSynchronize, "cuCtxSynchronize")    \
    X(libraryLoadData, cuLibraryLoadData, "cuLibraryLoadData") \
    X(libraryGetKernel, cuLibraryGetKernel, "cuLibraryGetKernel") \
    X(kernelGetName, cuKernelGetName, "cuKernelGetName")       \
    X(memAlloc, cuMemAlloc_v2, "cuMemAlloc")                   \
    X(memAllocPitch, cuMemAllocPitch_v2, "cuMemAllocPitch")    \
    X(memAllocManaged, cuMemAllocManaged, "cuMemAllocManaged") \
    X(memFree, cuMemFree_v2, "cuMemFree")                      \
    X(memFreeAsync, cuMemFreeAsync, "cuMemFreeAsync")          \
    X(memAllocHost, cuMemAllocHost_v2, "cuMemAllocHost")       \
    X(memHostAlloc, cuMemHostAlloc, "cuMemHostAlloc")          \
    X(memFreeHost, cuMemFreeHost, "cuMemFreeHost")             \
    X(memHostRegister, cuMemHostRegister_v2, "cuMemHostRegister") \
    X(memHostUnregister, cuMemHostUnregister, "cuMemHostUnregister") \
    X(memGetInfo, cuMemGetInfo_v2, "cuMemGetInfo")             \
    X(memcpy, cuMemcpy, "cuMemcpy")                            \
    X(memcpyAsync, cuMemcpyAsync, "cuMemcpyAsync")             \
    X(memcpyHtoD, cuMemcpyHtoD_v2, "cuMemcpyHtoD")             \
    X(memcpyDtoH, cuMemcpyDtoH_v2, "cuMemcpyDtoH")             \
    X(memcpyDtoD, cuMemcpyDtoD_v2, "cuMemcpyDtoD")             \
    X(memcpyHtoDAsync, cuMemcpyHtoDAsync_v2, "cuMemcpyHtoDAsync") \
    X(memcpyDtoHAsync, cuMemcpyDtoHAsync_v2, "cuMemcpyDtoHAsync") \
    X(memcpyDtoDAsync, cuMemcpyDtoDAsync_v2, "cuMemcpyDtoDAsync") \
    X(memcpy2D, cuMemcpy2D_v2, "cuMemcpy2D")                   \
    X(memcpy2DAsync, cuMemcpy2DAsync_v2, "cuMemcpy2DAsync")    \
    X(memcpy3D, cuMemcpy3D_v2, "cuMemcpy3D")                   \
    X(memcpyBatchAsync, cuMemcpyBatchAsync_v2, "cuMemcpyBatchAsync") \
    X(deviceGetDefaultMemPool, cuDeviceGetDefaultMemPool, "cuDeviceGetDefaultMemPool") \
    X(memAllocFromPoolAsync, cuMemAllocFromPoolAsync, "cuMemAllocFromPoolAsync") \
    X(memcpy3DAsync, cuMemcpy3DAsync_v2, "cuMemcpy3DAsync")    \
    X(memcpyPeer, cuMemcpyPeer, "cuMemcpyPeer")                \
    X(memcpyPeerAsync, cuMemcpyPeerAsync, "cuMemcpyPeerAsync") \
    X(memsetD8, cuMemsetD8_v2, "cuMemsetD8")                   \
    X(memsetD8Async, cuMemsetD8Async, "cuMemsetD8Async")       \
    X(memsetD2D8, cuMemsetD2D8_v2, "cuMemsetD2D8")             \
    X(memsetD2D8Async, cuMemsetD2D8Async, "cuMemsetD2D8Async") \
    X(launchKernel, cuLaunchKernel, "cuLaunchKernel")          \
    X(launchCooperativeKernel, cuLaunchCooperativeKernel, "cuLaunchCooperativeKernel") \
    X(launchHostFunc, cuLaunchHostFunc, "cuLaunchHostFunc")    \
    X(streamCreate, cuStreamCreate, "cuStreamCreate")          \
    X(streamCreateWithPriority, cuStreamCreateWithPriority, "cuStreamCreateWithPriority") \
    X(streamDestroy, cuStreamDestroy_v2, "cuStreamDestroy")    \
    X(streamSynchronize, cuStreamSynchronize, "cuStreamSynchronize") \
    X(streamQuery, cuStreamQuery, "cuStreamQuery")             \
    X(streamWaitEvent, cuStreamWaitEvent, "cuStreamWaitEvent") \
    X(eventCreate, cuEventCreate, "cuEventCreate")             \
    X(eventDestroy, cuEventDestroy_v2, "cuEventDestroy")       \
    X(eventRecord, cuEventRecord, "cuEventRecord")             \
    X(eventSynchronize, cuEventSynchronize, "cuEventSynchronize") \
    X(eventQuery, cuEventQuery, "cuEventQuery")                \
    X(eventElapsedTime, cuEventElapsedTime_v2, "cuEventElapsedTime") \
    X(getProcAddress, cuGetProcAddress_v2, "cuGetProcAddress") \
    X(streamBeginCapture, cuStreamBeginCapture_v2, "cuStreamBeginCapture") \
    X(streamEndCapture, cuStreamEndCapture, "cuStreamEndCapture") \
    X(streamIsCapturing, cuStreamIsCapturing, "cuStreamIsCapturing") \
    X(streamGetCaptureInfo, cuStreamGetCaptureInfo_v3, "cuStreamGetCaptureInfo") \
    X(threadExchangeStreamCaptureMode, cuThreadExchangeStreamCaptureMode, "cuThreadExchangeStreamCaptureMode") \
    X(graphInstantiate, cuGraphInstantiateWithFlags, "cuGraphInstantiateWithFlags") \
    X(graphLaunch, cuGraphLaunch, "cuGraphLaunch")             \
    X(graphExecDestroy, cuGraphExecDestroy, "cuGraphExecDestroy") \
    X(graphDestroy, cuGraphDestroy, "cuGraphDestroy")          \
    X(primaryCtxSetFlags, cuDevicePrimaryCtxSetFlags, "cuDevicePrimaryCtxSetFlags") \
    X(primaryCtxReset, cuDevicePrimaryCtxReset, "cuDevicePrimaryCtxReset") \
    X(ctxGetFlags, cuCtxGetFlags, "cuCtxGetFlags")             \
    X(deviceCanAccessPeer, cuDeviceCanAccessPeer, "cuDeviceCanAccessPeer") \
    X(ctxEnablePeerAccess, cuCtxEnablePeerAccess, "cuCtxEnablePeerAccess") \
    X(ctxDisablePeerAccess, cuCtxDisablePeerAccess, "cuCtxDisablePeerAccess") \
    X(memHostGetDevicePointer, cuMemHostGetDevicePointer_v2, "cuMemHostGetDevicePointer") \
    X(memHostGetFlags, cuMemHostGetFlags, "cuMemHostGetFlags") \
    X(pointerGetAttribute, cuPointerGetAttribute, "cuPointerGetAttribute") \
    X(streamAddCallback, cuStreamAddCallback, "cuStreamAddCallback") \
    X(streamGetPriority, cuStreamGetPriority, "cuStreamGetPriority") \
    X(streamGetFlags, cuStreamGetFlags, "cuStreamGetFlags")    \
    X(streamGetId, cuStreamGetId, "cuStreamGetId")             \
    X(streamGetDevice, cuStreamGetDevice, "cuStreamGetDevice") \
    X(ctxGetStreamPriorityRange, cuCtxGetStreamPriorityRange, "cuCtxGetStreamPriorityRange") \
    X(occupancyMaxActiveBlocks, cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags, \
      "cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags")  \
    X(occupancyAvailableDynamicSMem, cuOccupancyAvailableDynamicSMemPerBlock, \
      "cuOccupancyAvailableDynamicSMemPerBlock")                \
    X(graphCreate, cuGraphCreate, "cuGraphCreate")             \
    X(graphAddKernelNode, cuGraphAddKernelNode, "cuGraphAddKernelNode") \
    X(graphAddMemcpyNode, cuGraphAddMemcpyNode, "cuGraphAddMemcpyNode") \
    X(graphAddMemsetNode, cuGraphAddMemsetNode, "cuGraphAddMemsetNode") \
    X(graphAddHostNode, cuGraphAddHostNode, "cuGraphAddHostNode") \
    X(graphAddEmptyNode, cuGraphAddEmptyNode, "cuGraphAddEmptyNode") \
    X(graphKernelNodeSetParams, cuGraphKernelNodeSetParams, "cuGraphKernelNodeSetParams") \
    X(graphExecKernelNodeSetParams, cuGraphExecKernelNodeSetParams, "cuGraphExecKernelNodeSetParams") \
    X(graphNodeGetType, cuGraphNodeGetType, "cuGraphNodeGetType") \
    X(graphGetNodes, cuGraphGetNodes, "cuGraphGetNodes")       \
    X(graphClone, cuGraphClone, "cuGraphClone")                \
    X(graphExecUpdate, cuGraphExecUpdate, "cuGraphExecUpdate") \
    X(graphUpload, cuGraphUpload, "cuGraphUpload")             \
    X(profilerStart, cuProfilerStart, "cuProfilerStart")       \
    X(profilerStop, cuProfilerStop, "cuProfilerStop")

struct fr_driver {
#define FR_FIELD(field, fn, name) __typeof__(fn) *field;
    FR_DRIVER_ENTRIES(FR_FIELD)
#undef FR_FIELD
};

/* The driver's entry points, and the per-thread default stream ones. */
const struct fr_driver *fr_drv(int per_thread);
/* Around each work-making call: the call's own correlation id, shared by
 * the driver calls inside it, as CUPTI sees a runtime (fakecuda.h). */
void fr_rt_enter(const char *cupti_name);
void fr_rt_leave(void);
/* Loads the driver, initializes it and makes the device's primary context
 * current on this thread. */
cudaError_t fr_ready(void);
/* In an API function: return the error if the driver is not usable. */
#define READY()                          \
    do {                                 \
        cudaError_t e_ = fr_ready();     \
        if (e_)                          \
            return e_;                   \
    } while (0)
/* In an API function: return a driver result as the runtime's error. */
#define RET(r) return fr_set_error(fr_error(r))
cudaError_t fr_error(CUresult r);
cudaError_t fr_set_error(cudaError_t e);
int fr_current_device(void);
void *fr_driver_symbol(const char *name);

/* A runtime 3D copy as the driver's; 0 if it cannot be (arrays). */
int fr_memcpy3d_params(const struct cudaMemcpy3DParms *p, CUDA_MEMCPY3D *out);
/* A 1D copy of count bytes as the runtime's 3D parameters (graph nodes). */
struct cudaMemcpy3DParms fr_memcpy1d_parms(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind);

/* Registered kernels (fr_kernels.c). */
CUkernel fr_kernel_for(const void *host_fun);
const char *fr_kernel_name(const void *host_fun);

#endif
