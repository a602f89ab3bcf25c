/* alloc_loop: a training-style loop that allocates 64 MiB with cudaMalloc
 * and frees it every step, around one short kernel. The host time goes
 * into the allocation (the simulated driver populates the pages, as a real
 * one maps them): the GPU idles while the host is inside cudaMalloc, and
 * the report must name the line that allocates, not the launch after it.
 * The lines the tests look for carry marker comments. */
#include <stdio.h>
#include <cuda_runtime_api.h>
#include "fakecuda.h"

#define STEPS 12

static const void *kern;
static dim3 g1 = {1, 1, 1}, b1 = {32, 1, 1};

__attribute__((noinline)) static void *step_alloc(void)
{
    void *p = NULL;
    if (cudaMalloc(&p, 64u << 20) != cudaSuccess) /* ALLOC_LINE */
        return NULL;
    return p;
}

__attribute__((noinline)) static int step_free(void *p)
{
    return cudaFree(p) != cudaSuccess; /* FREE_LINE */
}

__attribute__((noinline)) static int step_launch(void)
{
    return cudaLaunchKernel(kern, g1, b1, NULL, 0, NULL) != cudaSuccess; /* LAUNCH_LINE */
}

int main(void)
{
    kern = fakecuda_runtime_kernel("step_kernel", 20000);
    for (int i = 0; i < STEPS; i++) {
        if (step_launch())
            return 1;
        void *p = step_alloc();
        if (!p || step_free(p))
            return 1;
    }
    if (cudaDeviceSynchronize() != cudaSuccess)
        return 1;
    printf("alloc_loop: %d steps\n", STEPS);
    return 0;
}
