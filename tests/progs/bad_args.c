/* bad_args: CUDA calls with arguments the API rejects (NULL and dangling
 * pointers, absurd sizes, NULL configs and descriptors), one per line:
 * "NAME RESULT". Traced or not, the results must be the same, and the
 * trace must record each call with the result the program saw. */
#include <stdio.h>
#include <stdint.h>
#include <cuda.h>
#include <cuda_runtime_api.h>
#include "fakecuda.h"

#define SHOW(name, expr) printf("%s %d\n", name, (int)(expr))

int main(void)
{
    void *d = NULL, *nothing = NULL;
    char host[64] = {0};
    cudaMalloc(&d, 64);
    SHOW("cudaMalloc", cudaMalloc(NULL, 16));
    SHOW("cudaMalloc", cudaMalloc(&nothing, (size_t)1 << 62));
    SHOW("cudaMemcpy", cudaMemcpy(NULL, host, 16, cudaMemcpyHostToDevice));
    SHOW("cudaMemcpy", cudaMemcpy(d, NULL, 16, cudaMemcpyHostToDevice));
    SHOW("cudaMemcpy", cudaMemcpy(d, host, (size_t)1 << 40, cudaMemcpyHostToDevice));
    SHOW("cudaMemcpy", cudaMemcpy(d, host, 16, (enum cudaMemcpyKind)77));
    SHOW("cudaMemcpyAsync", cudaMemcpyAsync(d, host, (size_t)1 << 40, cudaMemcpyHostToDevice, NULL));
    SHOW("cudaMemset", cudaMemset((void *)(uintptr_t)0x10, 0, 16));
    SHOW("cudaMemcpy3D", cudaMemcpy3D(NULL));
    dim3 g = {1, 1, 1}, b = {1, 1, 1};
    SHOW("cudaLaunchKernel", cudaLaunchKernel(NULL, g, b, NULL, 0, NULL));
    SHOW("cudaLaunchKernelExC", cudaLaunchKernelExC(NULL, fakecuda_runtime_kernel("k", 0), NULL));
    SHOW("cudaStreamSynchronize", cudaStreamSynchronize(NULL));
    SHOW("cudaEventSynchronize", cudaEventSynchronize(NULL));
    SHOW("cudaFree", cudaFree((void *)(uintptr_t)0x1234));
    SHOW("cudaFreeHost", cudaFreeHost((void *)(uintptr_t)0x1234));
    SHOW("cudaHostRegister", cudaHostRegister(NULL, 4096, 0));
    SHOW("cuMemcpy2D_v2", cuMemcpy2D(NULL));
    SHOW("cuMemcpy3D_v2", cuMemcpy3D(NULL));
    SHOW("cuLaunchKernelEx", cuLaunchKernelEx(NULL, NULL, NULL, NULL));
    SHOW("cuLaunchKernel", cuLaunchKernel(NULL, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL));
    SHOW("cuMemcpyHtoD_v2", cuMemcpyHtoD((CUdeviceptr)0, host, 16));
    SHOW("cuMemAlloc_v2", cuMemAlloc(NULL, 16));
    SHOW("cudaMemcpyBatchAsync", cudaMemcpyBatchAsync(NULL, NULL, NULL, 1, NULL, NULL, 0, NULL));
    SHOW("cudaGetLastError", cudaGetLastError());
    cudaFree(d);
    return 0;
}
