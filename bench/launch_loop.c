/* launch_loop: the C workload of bench/run.py. N kernel launches on the
 * legacy stream, made DEPTH native frames down, each timed with
 * CLOCK_MONOTONIC; writes the N durations (ns) to OUT, one per line, and
 * prints the process's peak resident memory (kB) on stdout.
 * argv: N DEPTH OUT */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cuda_runtime_api.h>
#include "fakecuda.h"

static const void *kern;
static unsigned *times;

static unsigned long now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (unsigned long)ts.tv_sec * 1000000000ul + (unsigned long)ts.tv_nsec;
}

__attribute__((noinline)) static void loop(long n)
{
    dim3 g = {1, 1, 1}, b = {32, 1, 1};
    for (long i = 0; i < n; i++) {
        unsigned long t0 = now();
        cudaLaunchKernel(kern, g, b, NULL, 0, NULL);
        times[i] = (unsigned)(now() - t0);
    }
}

__attribute__((noinline)) static void nest(int depth, long n)
{
    if (depth <= 1)
        loop(n);
    else
        nest(depth - 1, n);
    __asm__ volatile("" ::: "memory"); /* not a tail call: each level stays a frame */
}

static long peak_rss_kb(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kb = -1;
    while (f && fgets(line, sizeof(line), f))
        if (strncmp(line, "VmHWM:", 6) == 0)
            kb = strtol(line + 6, NULL, 10);
    if (f)
        fclose(f);
    return kb;
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 100000;
    int depth = argc > 2 ? atoi(argv[2]) : 1;
    kern = fakecuda_runtime_kernel("bench_kernel", 0);
    times = calloc((size_t)n, sizeof(*times));
    if (!times)
        return 1;
    nest(depth, 2000 < n ? 2000 : n); /* warm up: first-seen stacks and names */
    nest(depth, n);
    cudaDeviceSynchronize();
    FILE *out = fopen(argc > 3 ? argv[3] : "/dev/null", "w");
    for (long i = 0; out && i < n; i++)
        fprintf(out, "%u\n", times[i]);
    if (out)
        fclose(out);
    printf("%ld\n", peak_rss_kb());
    return 0;
}
