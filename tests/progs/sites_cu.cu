// sites_cu: <<<>>> launches from every kind of caller a program has, for
// tests/test_sites.py, which builds it the ways users build (-O0 -g, -O2,
// -O3, -O3 -g, -O3 -lineinfo) and checks that each launch's site names the
// function that launches (and with -g its line), whatever nvcc's stub and
// the kernel's host-side wrapper became: called, tail-called or inlined.
// Each caller launches its own kernel a number of times of its own, so its
// launches can be told apart; a 3 ms sleep before each caller's launches
// makes an idle gap that ends at its first launch. LAUNCH:function markers
// name the line of each launch, CALLS:function the caller's line that calls it.
#include <cstdio>
#include <thread>
#include <unistd.h>
#include <cuda_runtime.h>

__global__ void k_main(float *x) { x[threadIdx.x] += 1.0f; }
__global__ void k_noinline(float *x) { x[threadIdx.x] += 2.0f; }
__global__ void k_static(float *x) { x[threadIdx.x] += 3.0f; }
__global__ void k_pointer(float *x) { x[threadIdx.x] += 5.0f; }
__global__ void k_thread(float *x) { x[threadIdx.x] += 6.0f; }

template <int N> __global__ void k_tmpl(float *x)
{
    x[threadIdx.x] += (float)N;
}

static void idle() { usleep(3000); }

__attribute__((noinline)) void launch_noinline(float *x)
{
    idle();
    for (int i = 0; i < 2; i++)
        k_noinline<<<1, 32>>>(x); // LAUNCH:launch_noinline
}

static void launch_static(float *x)
{
    idle();
    for (int i = 0; i < 3; i++)
        k_static<<<1, 32>>>(x); // LAUNCH:launch_static
}

template <int N> void launch_tmpl(float *x)
{
    idle();
    for (int i = 0; i < N; i++)
        k_tmpl<N><<<1, 32>>>(x); // LAUNCH:launch_tmpl
}

void launch_pointer(float *x)
{
    idle();
    for (int i = 0; i < 5; i++)
        k_pointer<<<1, 32>>>(x); // LAUNCH:launch_pointer
}

void launch_thread(float *x)
{
    idle();
    for (int i = 0; i < 6; i++)
        k_thread<<<1, 32>>>(x); // LAUNCH:launch_thread
}

// Read through a volatile so no build can see which function it calls.
static void (*volatile pointer_target)(float *) = launch_pointer;

int main()
{
    float *x = nullptr;
    if (cudaMalloc(&x, 32 * sizeof(float)) != cudaSuccess) {
        fprintf(stderr, "sites_cu: no CUDA device\n");
        return 1;
    }
    idle();
    k_main<<<1, 32>>>(x); // LAUNCH:main
    launch_noinline(x);   // CALLS:launch_noinline
    launch_static(x);     // CALLS:launch_static
    launch_tmpl<4>(x);    // CALLS:launch_tmpl
    pointer_target(x);    // CALLS:launch_pointer
    std::thread t(launch_thread, x);
    t.join();
    cudaDeviceSynchronize();
    cudaFree(x);
    printf("sites_cu ok\n");
    return 0;
}
