/* standby_loop: a long-running job for the standby tests.
 * argv: SECONDS LOG [FORK]
 * Launches `step_kernel` in a loop, sleeping 2 ms (nanosleep) between
 * launches, for SECONDS; logs each launch as "i t0 t1" (CLOCK_MONOTONIC ns
 * around the call) to LOG at the end. Prints "ready" once its first CUDA
 * call is made (the standby channel then exists). Ground truth for the
 * tests: which launches fell inside a window, from the log. Exits 3 if
 * any nanosleep returned early or with EINTR (the tracer must never
 * interrupt the program's sleeps). With FORK=1 it forks once after the
 * first launch; the child runs the same loop (logging to LOG.child) and
 * prints "child PID ready". The first CUDA call's start and end (CLOCK_MONOTONIC
 * ns) go to LOG.first. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cuda_runtime_api.h>
#include "fakecuda.h"

static unsigned long now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (unsigned long)ts.tv_sec * 1000000000ul + (unsigned long)ts.tv_nsec;
}

static int run(double seconds, const char *log, const void *k)
{
    static unsigned long t0s[200000], t1s[200000];
    dim3 g = {1, 1, 1}, b = {32, 1, 1};
    unsigned long end = now_ns() + (unsigned long)(seconds * 1e9);
    long n = 0;
    int early = 0;
    while (now_ns() < end && n < 200000) {
        t0s[n] = now_ns();
        cudaLaunchKernel(k, g, b, NULL, 0, NULL);
        t1s[n] = now_ns();
        n++;
        struct timespec ts = {0, 2000000}, rem;
        unsigned long s0 = now_ns();
        if (nanosleep(&ts, &rem) != 0 || now_ns() - s0 < 2000000)
            early = 1;
    }
    cudaDeviceSynchronize();
    FILE *f = fopen(log, "w");
    for (long i = 0; f && i < n; i++)
        fprintf(f, "%ld %lu %lu\n", i, t0s[i], t1s[i]);
    if (f)
        fclose(f);
    return early ? 3 : 0;
}

int main(int argc, char **argv)
{
    if (argc < 3)
        return 2;
    double seconds = atof(argv[1]);
    int do_fork = argc > 3 && atoi(argv[3]) == 1;
    const void *k = fakecuda_runtime_kernel("step_kernel", 10000);
    void *p;
    /* first, as PyTorch does: the runtime finds the driver's functions
     * here, outside any call the tracer records */
    int ndev = 0;
    cudaGetDeviceCount(&ndev);
    unsigned long first0 = now_ns();
    cudaMalloc(&p, 256); /* the first CUDA call: the channel opens here */
    unsigned long first1 = now_ns();
    char flog[4096];
    snprintf(flog, sizeof(flog), "%s.first", argv[2]);
    FILE *ff = fopen(flog, "w");
    if (ff) {
        fprintf(ff, "%lu %lu\n", first0, first1);
        fclose(ff);
    }
    printf("ready\n");
    fflush(stdout);
    if (do_fork) {
        pid_t c = fork();
        if (c == 0) {
            cudaFree(p); /* the child's first CUDA call opens its own channel */
            printf("child %ld ready\n", (long)getpid());
            fflush(stdout);
            char clog[4096];
            snprintf(clog, sizeof(clog), "%s.child", argv[2]);
            _exit(run(seconds, clog, k));
        }
        int rc = run(seconds, argv[2], k);
        int st = 0;
        waitpid(c, &st, 0);
        return rc ? rc : (WIFEXITED(st) ? WEXITSTATUS(st) : 4);
    }
    return run(seconds, argv[2], k);
}
