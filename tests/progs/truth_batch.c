/* truth_batch: batched copies of known sizes, for tests/test_truth.py.
 * upload_pinned(): one cudaMemcpyBatchAsync of three host-to-device copies
 *   from pinned memory, 1000 + 70000 + 2097152 bytes (one per size band
 *   <4KiB, 64KiB-1MiB, 1MiB-16MiB);
 * upload_pageable(): one of two copies from pageable memory, 8192 + 20000
 *   bytes (both 4KiB-64KiB);
 * then a stream sync. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cuda_runtime_api.h>

static cudaStream_t s;
static char *dev;

static int batch(char *const *dsts, char *const *srcs, const size_t *sizes, size_t n)
{
    struct cudaMemcpyAttributes attr;
    memset(&attr, 0, sizeof(attr));
    attr.srcAccessOrder = cudaMemcpySrcAccessOrderStream;
    size_t idx = 0;
    return cudaMemcpyBatchAsync((void *const *)dsts, (const void *const *)srcs, sizes, n, &attr, &idx, 1, s) ==
           cudaSuccess;
}

__attribute__((noinline)) static int upload_pinned(char *pinned)
{
    size_t sizes[3] = {1000, 70000, 2097152};
    char *dsts[3] = {dev, dev + 4096, dev + 131072};
    char *srcs[3] = {pinned, pinned + 4096, pinned + 131072};
    return batch(dsts, srcs, sizes, 3);
}

__attribute__((noinline)) static int upload_pageable(char *pageable)
{
    size_t sizes[2] = {8192, 20000};
    char *dsts[2] = {dev + 3 * 1048576, dev + 3 * 1048576 + 16384};
    char *srcs[2] = {pageable, pageable + 16384};
    return batch(dsts, srcs, sizes, 2);
}

int main(void)
{
    char *pinned, *pageable = malloc(65536);
    memset(pageable, 3, 65536);
    cudaStreamCreate(&s);
    if (cudaMalloc((void **)&dev, 4 << 20) != cudaSuccess || cudaMallocHost((void **)&pinned, 4 << 20) != cudaSuccess)
        return 1;
    memset(pinned, 9, 4 << 20);
    int ok = upload_pinned(pinned) + upload_pageable(pageable);
    cudaStreamSynchronize(s);
    printf("truth_batch: %d batches\n", ok);
    return ok == 2 ? 0 : 1;
}
