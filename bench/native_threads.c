/* native_threads: the sampler bench's native workload (bench/run.py --only
 * sampler): THREADS threads for SECONDS, each DEPTH native frames down
 * (noinline calls, so that a blocked thread's unwound stack is that deep).
 * The first ACTIVE of them loop: a kernel launch, 2 ms of computing, a
 * 3 ms sleep (each sleep a new blocked stack for the sampler to unwind);
 * the others make one launch (so every thread is one the sampler
 * samples) and then wait on a condition variable, as idle loader threads
 * do.
 *   native_threads THREADS SECONDS DEPTH [ACTIVE] */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <cuda_runtime_api.h>
#include "fakecuda.h"

static const void *kern;
static double end_s;
static int depth;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int done;

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void launch(void)
{
    dim3 g = {1, 1, 1}, b = {32, 1, 1};
    cudaLaunchKernel(kern, g, b, NULL, 0, NULL);
}

static unsigned long work(int active)
{
    unsigned long x = 1;
    launch();
    if (!active) {
        pthread_mutex_lock(&mu);
        while (!done)
            pthread_cond_wait(&cv, &mu);
        pthread_mutex_unlock(&mu);
        return x;
    }
    while (now_s() < end_s) {
        launch();
        double t = now_s() + 0.002;
        while (now_s() < t)
            for (int i = 0; i < 100; i++)
                x = x * 6364136223846793005ul + 1442695040888963407ul;
        struct timespec ts = {0, 3000000};
        nanosleep(&ts, NULL);
    }
    return x;
}

__attribute__((noinline)) static unsigned long nest(int d, int active)
{
    unsigned long x = d <= 1 ? work(active) : nest(d - 1, active);
    __asm__ volatile("" : "+r"(x)); /* not a tail call: each frame stays */
    return x + 1;
}

static void *thread_main(void *arg)
{
    nest(depth, (int)(long)arg);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: native_threads THREADS SECONDS DEPTH [ACTIVE]\n");
        return 2;
    }
    int threads = atoi(argv[1]), active = argc > 4 ? atoi(argv[4]) : threads;
    depth = atoi(argv[3]);
    kern = fakecuda_runtime_kernel("bench_kernel", 1000);
    end_s = now_s() + atof(argv[2]);
    pthread_t t[256];
    for (int i = 0; i < threads && i < 256; i++)
        pthread_create(&t[i], NULL, thread_main, (void *)(long)(i < active));
    struct timespec ts = {0, 10000000};
    while (now_s() < end_s)
        nanosleep(&ts, NULL);
    pthread_mutex_lock(&mu);
    done = 1;
    pthread_cond_broadcast(&cv);
    pthread_mutex_unlock(&mu);
    for (int i = 0; i < threads && i < 256; i++)
        pthread_join(t[i], NULL);
    cudaDeviceSynchronize();
    printf("native_threads: done\n");
    return 0;
}
