/* many_configs: N launches (argv[1]), each with a grid of its own (grid.x =
 * 1 .. N, block.x = 32 * (i % 4 + 1)), then the first R configurations
 * again (argv[2]): more distinct launch configurations than the writer
 * remembers at once. */
#include <stdio.h>
#include <stdlib.h>
#include <cuda_runtime_api.h>
#include "fakecuda.h"

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 1000;
    int again = argc > 2 ? atoi(argv[2]) : 10;
    const void *k = fakecuda_runtime_kernel("config_kernel", 0);
    int ok = 0;
    for (int i = 0; i < n + again; i++) {
        int c = i < n ? i : i - n;
        dim3 g = {(unsigned)c + 1, 1, 1}, b = {32u * (unsigned)(c % 4 + 1), 1, 1};
        ok += cudaLaunchKernel(k, g, b, NULL, 0, NULL) == cudaSuccess;
    }
    cudaDeviceSynchronize();
    printf("many_configs: %d launches\n", ok);
    return 0;
}
