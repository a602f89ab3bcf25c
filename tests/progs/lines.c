/* lines: known native stacks for the source-line tests (tests/test_native_lines.py).
 * Lines are asserted exactly: the markers LINE:name at the end of a line
 * name the lines the test reads (it finds them in this file, so edits
 * that move code keep the test right).
 *
 *   main -> outer_copy -> middle_copy -> [inlined] inline_copy -> [inlined] inner_copy -> cudaMemcpy
 *   main -> launch_step -> cudaLaunchKernel
 */
#include <stdio.h>
#include <stdlib.h>
#include <cuda_runtime_api.h>
#include "fakecuda.h"

static __attribute__((always_inline)) inline void inner_copy(void *dst, const void *src, size_t n)
{
    if (cudaMemcpy(dst, src, n, cudaMemcpyHostToDevice) != cudaSuccess) /* LINE:inner_copy */
        exit(1);
}

/* Inlined, and holding an inlined call itself: two inlined frames. */
static __attribute__((always_inline)) inline void inline_copy(void *dst, const void *src, size_t n)
{
    inner_copy(dst, src, n); /* LINE:inline_copy */
}

__attribute__((noinline)) void middle_copy(void *dst, const void *src, size_t n)
{
    inline_copy(dst, src, n); /* LINE:middle_copy */
    __asm__ volatile("" ::: "memory"); /* not a tail call */
}

__attribute__((noinline)) void outer_copy(void *dst, const void *src, size_t n)
{
    middle_copy(dst, src, n); /* LINE:outer_copy */
    __asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) void launch_step(const void *k, void *dev)
{
    void *args[] = {&dev};
    dim3 grid = {1, 1, 1}, block = {32, 1, 1};
    if (cudaLaunchKernel(k, grid, block, args, 0, 0) != cudaSuccess) /* LINE:launch_step */
        exit(1);
    __asm__ volatile("" ::: "memory");
}

int main(void)
{
    static char host[4096];
    void *dev = NULL;
    if (cudaMalloc(&dev, sizeof(host)) != cudaSuccess)
        return 1;
    outer_copy(dev, host, sizeof(host)); /* LINE:main_copy */
    launch_step(fakecuda_runtime_kernel("lines_kernel", 0), dev); /* LINE:main_launch */
    cudaDeviceSynchronize();
    cudaFree(dev);
    printf("lines ok\n");
    return 0;
}
