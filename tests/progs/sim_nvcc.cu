// sim_nvcc: runtime functions as an nvcc-built program reaches them: the
// header's cudaOccupancyMaxPotentialBlockSize template (over
// cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags, cudaFuncGetAttributes
// and cudaDeviceGetAttribute), mapped host memory written by a <<<>>> launch,
// and a stream callback. Prints "name value" lines for tests/test_simulator.py.
#include <cstdio>
#include <cuda_runtime.h>

__global__ void occ_kernel(float *x)
{
    if (x)
        x[threadIdx.x] = 1.0f;
}

static int called = -1;

static void CUDART_CB on_done(cudaStream_t, cudaError_t status, void *)
{
    called = status;
}

int main()
{
    int min_grid = 0, block = 0, n = 0;
    printf("potential_rc %d\n", (int)cudaOccupancyMaxPotentialBlockSize(&min_grid, &block, occ_kernel, 0, 0));
    printf("potential_block %d\npotential_min_grid %d\n", block, min_grid);
    cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, occ_kernel, 256, 0);
    printf("occupancy_256 %d\n", n);
    float *h = nullptr, *d = nullptr;
    printf("host_alloc_rc %d\n", (int)cudaHostAlloc(&h, 4096, cudaHostAllocMapped));
    printf("device_pointer_rc %d\n", (int)cudaHostGetDevicePointer((void **)&d, h, 0));
    cudaStream_t s;
    cudaStreamCreate(&s);
    occ_kernel<<<1, 32, 0, s>>>(d);
    printf("launch_rc %d\n", (int)cudaGetLastError());
    printf("callback_rc %d\n", (int)cudaStreamAddCallback(s, on_done, nullptr, 0));
    printf("sync_rc %d\n", (int)cudaStreamSynchronize(s));
    printf("callback_status %d\n", called);
    return 0;
}
