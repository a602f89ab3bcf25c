/* launch_loop: the C workload of bench/run.py. N kernel launches on the
 * legacy stream, made DEPTH native frames down, each timed with
 * CLOCK_MONOTONIC; writes the N durations (ns) to OUT, one per line, and
 * prints the process's peak resident memory (kB) and the CPU time (ns) the
 * main thread spent in its timed launches on stdout. With THREADS
 * above 1, that many threads each make N launches at once, each on its
 * own stream, and OUT holds all their durations.
 * With LAUNCH_LOOP_GATE=DIR (one thread): prints "ready" after its first
 * CUDA call and waits for DIR/1 to exist, makes its warm-up launches,
 * prints "warm" and waits for DIR/2: bench/run.py opens a standby window
 * around the warm-up, to time the launches after it closes.
 * argv: N DEPTH OUT [THREADS] */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <cuda_runtime_api.h>
#include "fakecuda.h"

static const void *kern;
static long n_per_thread;
static int depth;
static pthread_barrier_t go;

static unsigned long now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (unsigned long)ts.tv_sec * 1000000000ul + (unsigned long)ts.tv_nsec;
}

__attribute__((noinline)) static void loop(long n, unsigned *times, cudaStream_t s)
{
    dim3 g = {1, 1, 1}, b = {32, 1, 1};
    for (long i = 0; i < n; i++) {
        unsigned long t0 = now();
        cudaLaunchKernel(kern, g, b, NULL, 0, s);
        times[i] = (unsigned)(now() - t0);
    }
}

__attribute__((noinline)) static void nest(int d, long n, unsigned *times, cudaStream_t s)
{
    if (d <= 1)
        loop(n, times, s);
    else
        nest(d - 1, n, times, s);
    __asm__ volatile("" ::: "memory"); /* not a tail call: each level stays a frame */
}

static void *worker(void *arg)
{
    unsigned *times = arg;
    cudaStream_t s = NULL;
    cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
    unsigned warm[2000];
    nest(depth, 2000 < n_per_thread ? 2000 : n_per_thread, warm, s); /* first-seen stacks and names */
    pthread_barrier_wait(&go);
    nest(depth, n_per_thread, times, s);
    cudaStreamSynchronize(s);
    return NULL;
}

static unsigned long thread_cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (unsigned long)ts.tv_sec * 1000000000ul + (unsigned long)ts.tv_nsec;
}

static void gate_wait(const char *dir, const char *say, const char *file)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/%s", dir, file);
    printf("%s\n", say);
    fflush(stdout);
    while (access(path, F_OK) != 0)
        usleep(1000);
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
    depth = argc > 2 ? atoi(argv[2]) : 1;
    int threads = argc > 4 ? atoi(argv[4]) : 1;
    if (threads < 1 || threads > 64)
        threads = 1;
    kern = fakecuda_runtime_kernel("bench_kernel", 0);
    unsigned *times = calloc((size_t)n * (size_t)threads, sizeof(*times));
    if (!times)
        return 1;
    unsigned long cpu = 0;
    const char *gate = getenv("LAUNCH_LOOP_GATE");
    if (threads == 1) {
        unsigned warm[2000];
        if (gate) {
            cudaFree(NULL);
            gate_wait(gate, "ready", "1");
        }
        nest(depth, 2000 < n ? 2000 : n, warm, NULL); /* warm up: first-seen stacks and names */
        if (gate)
            gate_wait(gate, "warm", "2");
        cpu = thread_cpu_ns();
        nest(depth, n, times, NULL);
        cpu = thread_cpu_ns() - cpu;
        cudaDeviceSynchronize();
    } else {
        n_per_thread = n;
        pthread_barrier_init(&go, NULL, (unsigned)threads);
        pthread_t t[64];
        for (int i = 0; i < threads; i++)
            pthread_create(&t[i], NULL, worker, times + (size_t)i * (size_t)n);
        for (int i = 0; i < threads; i++)
            pthread_join(t[i], NULL);
        cudaDeviceSynchronize();
    }
    FILE *out = fopen(argc > 3 ? argv[3] : "/dev/null", "w");
    for (long i = 0; out && i < n * threads; i++)
        fprintf(out, "%u\n", times[i]);
    if (out)
        fclose(out);
    printf("%ld %lu\n", peak_rss_kb(), cpu);
    return 0;
}
