/* thread_relay: threads that never call CUDA, one after another, each
 * alive for LIFE_MS (tests/test_sample_budget.py). Generation i starts
 * as generation i-1 ends: in MODE "join" the old one is joined first, so
 * the process's thread count falls by one and comes back; in MODE
 * "overlap" the new one starts first, so it rises by one and falls back.
 * Either way the count the sampler sees between two rounds may be the
 * one it saw before, while a thread it never listed runs. Each thread
 * works (a busy loop of 1 ms, a 1 ms sleep) in relay_work(), and prints
 * "gen I tid TID start_ns END_NS" on CLOCK_MONOTONIC, the trace's clock.
 * The main thread makes one launch first, so the trace exists.
 *   thread_relay GENERATIONS LIFE_MS MODE */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <cuda_runtime_api.h>
#include "fakecuda.h"

static long life_ms;

static unsigned long long now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (unsigned long long)t.tv_sec * 1000000000ull + (unsigned long long)t.tv_nsec;
}

struct gen {
    int i;
    long tid;
    unsigned long long start, end;
};

__attribute__((noinline)) static unsigned long relay_work(unsigned long long until)
{
    unsigned long x = 1;
    while (now_ns() < until) {
        unsigned long long t = now_ns() + 1000000ull;
        while (now_ns() < t)
            for (int i = 0; i < 100; i++)
                x = x * 6364136223846793005ul + 1442695040888963407ul;
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
    return x;
}

static void *relay_main(void *arg)
{
    struct gen *g = arg;
    g->tid = (long)syscall(SYS_gettid);
    g->start = now_ns();
    volatile unsigned long x = relay_work(g->start + (unsigned long long)life_ms * 1000000ull);
    (void)x;
    g->end = now_ns();
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc < 4 || (strcmp(argv[3], "join") != 0 && strcmp(argv[3], "overlap") != 0)) {
        fprintf(stderr, "usage: thread_relay GENERATIONS LIFE_MS join|overlap\n");
        return 2;
    }
    int gens = atoi(argv[1]), overlap = strcmp(argv[3], "overlap") == 0;
    life_ms = atol(argv[2]);
    const void *kern = fakecuda_runtime_kernel("relay_kernel", 1000);
    dim3 g1 = {1, 1, 1}, b1 = {32, 1, 1};
    cudaLaunchKernel(kern, g1, b1, NULL, 0, NULL);
    cudaDeviceSynchronize();
    struct gen *g = calloc((size_t)gens, sizeof(*g));
    pthread_t *t = calloc((size_t)gens, sizeof(*t));
    if (!g || !t)
        return 1;
    for (int i = 0; i < gens; i++) {
        g[i].i = i;
        if (!overlap && i > 0)
            pthread_join(t[i - 1], NULL);
        if (pthread_create(&t[i], NULL, relay_main, &g[i]) != 0)
            return 1;
        if (overlap && i > 0)
            pthread_join(t[i - 1], NULL);
    }
    pthread_join(t[gens - 1], NULL);
    for (int i = 0; i < gens; i++)
        printf("gen %d tid %ld start %llu end %llu\n", g[i].i, g[i].tid, g[i].start, g[i].end);
    cudaLaunchKernel(kern, g1, b1, NULL, 0, NULL);
    cudaDeviceSynchronize();
    free(g);
    free(t);
    return 0;
}
