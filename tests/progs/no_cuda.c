/* no_cuda: linked with the CUDA runtime but never calls it. No trace. */
#include <stdio.h>
#include <cuda_runtime_api.h>

int main(int argc, char **argv)
{
    (void)argv;
    if (argc > 5) /* never: keeps the library linked */
        cudaDeviceSynchronize();
    printf("no_cuda: done\n");
    return 4;
}
