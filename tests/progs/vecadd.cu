// vecadd: the first program people write, built by nvcc -cudart shared.
// Ground truth: 2 launches of vec_add (grid 4, block 256), 1 of scale
// (grid 2, block 128); HtoD 2 x 4096 B, DtoH 1 x 4096 B.
#include <cstdio>
#include <cuda_runtime.h>

__global__ void vec_add(const float *a, const float *b, float *c, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        c[i] = a[i] + b[i];
}

namespace ops {
__global__ void scale(float *x, float f, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        x[i] *= f;
}
}

int main()
{
    const int n = 1024;
    float ha[n], hb[n], hc[n];
    for (int i = 0; i < n; i++) {
        ha[i] = i;
        hb[i] = 2 * i;
    }
    float *a, *b, *c;
    cudaMalloc(&a, sizeof(ha));
    cudaMalloc(&b, sizeof(hb));
    cudaMalloc(&c, sizeof(hc));
    cudaMemcpy(a, ha, sizeof(ha), cudaMemcpyHostToDevice);
    cudaMemcpy(b, hb, sizeof(hb), cudaMemcpyHostToDevice);
    vec_add<<<4, 256>>>(a, b, c, n);
    vec_add<<<4, 256>>>(a, b, c, n);
    ops::scale<<<2, 128>>>(c, 2.0f, n);
    cudaDeviceSynchronize();
    cudaMemcpy(hc, c, sizeof(hc), cudaMemcpyDeviceToHost);
    // the simulated GPU does not compute: the copy round-trips what was there
    cudaFree(a);
    cudaFree(b);
    cudaFree(c);
    printf("vecadd: done %s\n", cudaGetLastError() == cudaSuccess ? "ok" : "error");
    return 0;
}
