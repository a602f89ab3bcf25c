// static_runtime: NVIDIA's CUDA runtime linked statically, as nvcc links
// it by default (tests/tests.mk builds it -O3 without -g, and -O0 -g), on
// the simulated driver. Ground truth: 3 rounds of a 256 KiB pageable
// host-to-device copy made in upload() and a launch of twice<<<256, 256>>>
// made in launch(), then a device sync in main().
#include <cstdio>
#include <cstdlib>

__global__ void twice(float *x, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        x[i] *= 2;
}

// each returns whether it failed: a test after the call keeps its frame on
// the stack (no tail call), in the release build too
__attribute__((noinline)) static int upload(float *d, const float *h, size_t n)
{
    return cudaMemcpy(d, h, n * sizeof(float), cudaMemcpyHostToDevice) != cudaSuccess;
}

__attribute__((noinline)) static int launch(float *d, int n)
{
    twice<<<n / 256, 256>>>(d, n);
    return cudaGetLastError() != cudaSuccess;
}

int main()
{
    const int n = 1 << 16;
    float *d, *h = (float *)calloc(n, sizeof(float));
    int bad = cudaMalloc(&d, n * sizeof(float)) != cudaSuccess;
    for (int i = 0; i < 3; i++)
        bad += upload(d, h, n) + launch(d, n);
    cudaError_t e = cudaDeviceSynchronize();
    printf("static_runtime: %d failed, sync %s\n", bad, cudaGetErrorName(e));
    return 0;
}
