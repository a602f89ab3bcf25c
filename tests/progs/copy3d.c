/* copy3d: 3D copies and host functions.
 * Ground truth: cudaMemcpy3D HtoD of a 4096 x 2 x 3 extent (24576 bytes)
 * from pageable memory; cudaMemcpy3DAsync DtoH of the same into pinned
 * memory on a stream; cudaLaunchHostFunc on that stream; then a driver
 * cuMemcpy3D HtoD of 4096 x 2 x 1 (8192 bytes). */
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <cuda.h>
#include <cuda_runtime_api.h>

static _Atomic int host_fn_ran;
static void CUDART_CB on_stream(void *arg)
{
    (void)arg;
    host_fn_ran = 1;
}

int main(void)
{
    static char pageable[24576];
    void *dev, *pinned;
    cudaStream_t s;
    cudaMalloc(&dev, sizeof(pageable));
    cudaMallocHost(&pinned, sizeof(pageable));
    cudaStreamCreate(&s);
    memset(pageable, 3, sizeof(pageable));
    struct cudaMemcpy3DParms up;
    memset(&up, 0, sizeof(up));
    up.srcPtr = (struct cudaPitchedPtr){pageable, 4096, 4096, 2};
    up.dstPtr = (struct cudaPitchedPtr){dev, 4096, 4096, 2};
    up.extent = (struct cudaExtent){4096, 2, 3};
    up.kind = cudaMemcpyHostToDevice;
    if (cudaMemcpy3D(&up) != cudaSuccess)
        return 1;
    struct cudaMemcpy3DParms down = up;
    down.srcPtr = up.dstPtr;
    down.dstPtr = (struct cudaPitchedPtr){pinned, 4096, 4096, 2};
    down.kind = cudaMemcpyDeviceToHost;
    if (cudaMemcpy3DAsync(&down, s) != cudaSuccess || cudaLaunchHostFunc(s, on_stream, NULL) != cudaSuccess)
        return 2;
    cudaStreamSynchronize(s); /* returns once the host function has run */
    int ran = host_fn_ran;
    CUDA_MEMCPY3D c;
    memset(&c, 0, sizeof(c));
    c.srcMemoryType = CU_MEMORYTYPE_HOST;
    c.srcHost = pageable;
    c.srcPitch = 4096;
    c.dstMemoryType = CU_MEMORYTYPE_DEVICE;
    c.dstDevice = (CUdeviceptr)dev;
    c.dstPitch = 4096;
    c.WidthInBytes = 4096;
    c.Height = 2;
    c.Depth = 1;
    if (cuMemcpy3D(&c) != CUDA_SUCCESS)
        return 3;
    int same = ((unsigned char *)pinned)[24575] == 3;
    printf("copy3d: %s, host function %s\n", same ? "ok" : "MISMATCH", ran ? "ran" : "did not run");
    return 0;
}
