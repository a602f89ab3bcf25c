// lines_cu: a kernel launched with <<<>>> from a known line, built by nvcc
// -g, for tests/test_native_lines.py: the site must name the user's line
// (launch_storm), not nvcc's __device_stub__ nor the runtime's wrappers.
#include <cstdio>
#include <cuda_runtime.h>

__global__ void storm_kernel(float *x, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        x[i] += 1.0f;
}

__attribute__((noinline)) void launch_storm(float *x, int n)
{
    storm_kernel<<<1, 32>>>(x, n); // LINE:launch_storm
    asm volatile("" ::: "memory");
}

int main()
{
    float *x;
    cudaMalloc(&x, 32 * sizeof(float));
    launch_storm(x, 32); // LINE:main_storm
    cudaDeviceSynchronize();
    cudaFree(x);
    printf("lines_cu ok\n");
    return 0;
}
