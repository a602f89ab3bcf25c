/* gt_cuda.h: NVIDIA's headers, as the hooks and readers see them. */
#ifndef GT_CUDA_H
#define GT_CUDA_H

#include <cuda.h>
#include <cuda_runtime_api.h>
#include <cudaProfiler.h>
#include <cuda_profiler_api.h>

/* cuda.h maps the API name to _v2; the legacy 4-argument entry point is a
 * distinct exported symbol that old binaries still call. */
#undef cuGetProcAddress
CUresult CUDAAPI cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags);

/* The compiler-generated launch path (crt/device_functions.h, C++ only). */
cudaError_t CUDARTAPI __cudaLaunchKernel(cudaKernel_t, dim3, dim3, void **, size_t, cudaStream_t);
cudaError_t CUDARTAPI __cudaLaunchKernel_ptsz(cudaKernel_t, dim3, dim3, void **, size_t, cudaStream_t);
cudaError_t CUDARTAPI __cudaGetKernel(cudaKernel_t *, const void *);
void CUDARTAPI __cudaRegisterFunction(void **, const char *, char *, const char *, int, uint3 *, uint3 *,
                                     dim3 *, dim3 *, int *);

#endif
