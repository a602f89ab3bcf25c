/* unrecorded_only: a program whose only CUDA calls are ones the tracer
 * does not record (a device count, the driver's version): `gputrace record`
 * writes no trace and says there were no recorded calls. */
#include <stdio.h>
#include <cuda_runtime_api.h>

int main(void)
{
    int n = 0, version = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess || n < 1 || cudaDriverGetVersion(&version) != cudaSuccess)
        return 1;
    printf("unrecorded_only: %d device%s\n", n, n == 1 ? "" : "s");
    return 0;
}
