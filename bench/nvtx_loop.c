/* nvtx_loop: the NVTX workload of bench/run.py. N nvtxRangePushA/
 * nvtxRangePop pairs from NVIDIA's NVTX v3 headers, made DEPTH native
 * frames down, each pair timed with CLOCK_MONOTONIC; writes the N
 * durations (ns) to OUT, one per line. One CUDA call first, so the
 * session has started before the timed pairs (as in any CUDA program).
 * argv: N DEPTH OUT */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <cuda_runtime_api.h>
#include <nvtx3/nvToolsExt.h>

static unsigned long now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (unsigned long)ts.tv_sec * 1000000000ul + (unsigned long)ts.tv_nsec;
}

__attribute__((noinline)) static void loop(long n, unsigned *times)
{
    for (long i = 0; i < n; i++) {
        unsigned long t0 = now();
        nvtxRangePushA("bench-range");
        nvtxRangePop();
        times[i] = (unsigned)(now() - t0);
    }
}

__attribute__((noinline)) static void nest(int d, long n, unsigned *times)
{
    if (d <= 1)
        loop(n, times);
    else
        nest(d - 1, n, times);
    __asm__ volatile("" ::: "memory"); /* not a tail call: each level stays a frame */
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 100000;
    int depth = argc > 2 ? atoi(argv[2]) : 1;
    unsigned *times = calloc((size_t)n, sizeof(*times));
    if (!times)
        return 1;
    cudaDeviceSynchronize();
    unsigned warm[2000];
    nest(depth, 2000 < n ? 2000 : n, warm); /* NVTX's first call loads the injection */
    nest(depth, n, times);
    FILE *out = fopen(argc > 3 ? argv[3] : "/dev/null", "w");
    for (long i = 0; out && i < n; i++)
        fprintf(out, "%u\n", times[i]);
    if (out)
        fclose(out);
    free(times);
    return 0;
}
