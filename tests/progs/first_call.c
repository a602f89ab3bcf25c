/* first_call: times its own first CUDA calls, as a program timing its
 * start-up would (CLOCK_MONOTONIC around each call), and prints each:
 * "first_call: NAME NS". The tracer's start-up happens inside the first;
 * a trace must not show it as that call's time. */
#include <stdio.h>
#include <time.h>
#include <cuda_runtime_api.h>

static unsigned long long now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (unsigned long long)t.tv_sec * 1000000000ull + (unsigned long long)t.tv_nsec;
}

int main(void)
{
    void *p = NULL;
    unsigned long long t0 = now_ns();
    cudaError_t a = cudaMalloc(&p, 1 << 20);
    unsigned long long t1 = now_ns();
    cudaError_t b = cudaMemset(p, 0, 1 << 20);
    unsigned long long t2 = now_ns();
    cudaError_t c = cudaFree(p);
    unsigned long long t3 = now_ns();
    if (a || b || c)
        return 1;
    printf("first_call: cudaMalloc %llu\nfirst_call: cudaMemset %llu\nfirst_call: cudaFree %llu\n", t1 - t0, t2 - t1,
           t3 - t2);
    return 0;
}
