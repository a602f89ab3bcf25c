// demo/train.cu: a training-like loop with the four problems gputrace's
// report is for, planted where you can see them (make demo builds it as a
// program is built to be profiled, nvcc -O2 -g, and runs it):
//   load_batch()  a host stall (the "data loader", 20 ms) and then a
//                 host-to-device copy of 8 MiB from pageable memory
//   forward()     300 tiny kernels: each takes less GPU time than its launch
//                 takes on the host, so the GPU waits for the launches
//   step_end()    a cudaDeviceSynchronize in every step
// Each checks what its CUDA calls return, as real code does; that also
// keeps each function's own frame on the stack, so the report can name it:
// a function whose last act is a call compiles (-O2) to a jump into it (a
// tail call) and leaves no frame, and the call then reads as made from
// main (docs/report.md, "Call sites"). noinline keeps each one a function
// of its own rather than part of main.
// It runs the same on a real GPU and on the simulated one.
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <unistd.h>
#include <cuda_runtime.h>

__global__ void tiny_op(float *x, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        x[i] = x[i] * 0.999f + 0.001f;
}

__global__ void matmul_like(float *x, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float acc = 0;
    for (int k = 0; k < 256 && i < n; k++)
        acc += x[(i + k) % n];
    if (i < n)
        x[i] = acc / 256;
}

static const size_t kBatch = 8 << 20;

static void check(cudaError_t err, const char *what)
{
    if (err != cudaSuccess) {
        fprintf(stderr, "train: %s: %s\n", what, cudaGetErrorString(err));
        exit(1);
    }
}

__attribute__((noinline)) static void load_batch(std::vector<char> &host, float *dev)
{
    usleep(20000); // reading and decoding the batch
    check(cudaMemcpy(dev, host.data(), kBatch, cudaMemcpyHostToDevice), "copy the batch");
}

__attribute__((noinline)) static void forward(float *dev, int n)
{
    for (int i = 0; i < 300; i++)
        tiny_op<<<1, 32>>>(dev, 32);
    matmul_like<<<(n + 255) / 256, 256>>>(dev, n);
    check(cudaGetLastError(), "launch");
}

__attribute__((noinline)) static void step_end() { check(cudaDeviceSynchronize(), "step"); }

int main(int argc, char **argv)
{
    int steps = argc > 1 ? atoi(argv[1]) : 8;
    std::vector<char> host(kBatch, 1); // pageable: the copy stages through the driver
    float *dev = nullptr;
    if (cudaMalloc(&dev, kBatch) != cudaSuccess) {
        fprintf(stderr, "train: no CUDA device\n");
        return 1;
    }
    int n = (int)(kBatch / sizeof(float));
    for (int s = 0; s < steps; s++) {
        load_batch(host, dev);
        forward(dev, n);
        step_end();
    }
    cudaFree(dev);
    printf("train: %d steps done\n", steps);
    return 0;
}
