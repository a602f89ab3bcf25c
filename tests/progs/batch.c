/* batch: a batch of copies and a pool allocation.
 * Ground truth: cudaMallocFromPoolAsync of 65536 bytes from the device's
 * default pool; one cudaMemcpyBatchAsync of three HtoD copies from pinned
 * memory (1024 + 2048 + 4096 bytes) into it; a stream sync. */
#include <stdio.h>
#include <string.h>
#include <cuda_runtime_api.h>

int main(void)
{
    cudaStream_t s;
    cudaMemPool_t pool;
    char *dev = NULL, *pinned = NULL;
    cudaStreamCreate(&s);
    cudaMallocHost((void **)&pinned, 8192);
    memset(pinned, 9, 8192);
    if (cudaDeviceGetDefaultMemPool(&pool, 0) != cudaSuccess ||
        cudaMallocFromPoolAsync((void **)&dev, 65536, pool, s) != cudaSuccess)
        return 1;
    void *dsts[3] = {dev, dev + 1024, dev + 4096};
    const void *srcs[3] = {pinned, pinned + 1024, pinned + 4096};
    size_t sizes[3] = {1024, 2048, 4096};
    struct cudaMemcpyAttributes attr;
    memset(&attr, 0, sizeof(attr));
    attr.srcAccessOrder = cudaMemcpySrcAccessOrderStream;
    size_t idx = 0;
    if (cudaMemcpyBatchAsync(dsts, srcs, sizes, 3, &attr, &idx, 1, s) != cudaSuccess)
        return 2;
    cudaStreamSynchronize(s);
    printf("batch: %s\n", dev[4096 + 4095] == 9 ? "ok" : "MISMATCH");
    return 0;
}
