/* host_wait: the GPU waits on the host in named functions, with answers
 * set here (tests/test_samples.py). Each step: a kernel and a sync, then
 *   spin():  a busy loop of STALL_MS (running)
 *   nap():   nanosleep of STALL_MS (blocked in clock_nanosleep/nanosleep)
 *   drain(): read() of a pipe a helper thread fills after STALL_MS
 * each stall ended by the next launch. It checks its own system calls the
 * sampler must not disturb: nanosleep never returns early nor with EINTR,
 * read never fails with EINTR and returns its byte. With THREADS > 0, each
 * step also starts and joins that many short threads that call CUDA (they
 * come and go while sampled); with FORK = 1, a child made by fork() does
 * a step of its own and is checked the same way.
 * Prints what it did; exits 0 when every check held, 3 when one failed.
 *   host_wait STEPS STALL_MS [THREADS] [FORK] */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cuda_runtime_api.h>
#include "fakecuda.h"

static const void *kern;
static dim3 g1 = {1, 1, 1}, b1 = {32, 1, 1};
static long stall_ms;
static int bad;
static int pipe_fd[2];

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static void step_gpu(void)
{
    cudaLaunchKernel(kern, g1, b1, NULL, 0, NULL);
    cudaDeviceSynchronize();
}

__attribute__((noinline)) static unsigned long spin(void)
{
    double end = now_ms() + (double)stall_ms;
    unsigned long x = 1;
    while (now_ms() < end)
        for (int i = 0; i < 1000; i++)
            x = x * 6364136223846793005ul + 1442695040888963407ul;
    return x;
}

__attribute__((noinline)) static void nap(void)
{
    struct timespec ts = {stall_ms / 1000, (stall_ms % 1000) * 1000000L};
    double t0 = now_ms();
    int rc = nanosleep(&ts, NULL);
    double took = now_ms() - t0;
    if (rc != 0) {
        fprintf(stderr, "host_wait: nanosleep failed: %s\n", errno == EINTR ? "EINTR" : "error");
        bad = 1;
    }
    if (took < (double)stall_ms) {
        fprintf(stderr, "host_wait: nanosleep returned early (%.3f ms of %ld)\n", took, stall_ms);
        bad = 1;
    }
}

static void *feeder(void *arg)
{
    (void)arg;
    struct timespec ts = {stall_ms / 1000, (stall_ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0)
        ;
    if (write(pipe_fd[1], "x", 1) != 1)
        bad = 1;
    return NULL;
}

__attribute__((noinline)) static void drain(void)
{
    pthread_t t;
    pthread_create(&t, NULL, feeder, NULL);
    char c;
    ssize_t n = read(pipe_fd[0], &c, 1);
    if (n != 1 || c != 'x') {
        fprintf(stderr, "host_wait: read returned %zd (%s)\n", n, n < 0 && errno == EINTR ? "EINTR" : "");
        bad = 1;
    }
    pthread_join(t, NULL);
}

static void *short_thread(void *arg)
{
    (void)arg;
    step_gpu();
    return NULL;
}

static void one_step(int threads)
{
    step_gpu();
    unsigned long x = spin();
    if (x == 42)
        printf("unlikely\n");
    step_gpu();
    nap();
    step_gpu();
    drain();
    pthread_t t[64];
    for (int i = 0; i < threads && i < 64; i++)
        pthread_create(&t[i], NULL, short_thread, NULL);
    for (int i = 0; i < threads && i < 64; i++)
        pthread_join(t[i], NULL);
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: host_wait STEPS STALL_MS [THREADS] [FORK]\n");
        return 2;
    }
    int steps = atoi(argv[1]), threads = argc > 3 ? atoi(argv[3]) : 0, do_fork = argc > 4 ? atoi(argv[4]) : 0;
    stall_ms = atol(argv[2]);
    kern = fakecuda_runtime_kernel("host_wait_kernel", 100000);
    if (pipe(pipe_fd) != 0)
        return 2;
    for (int s = 0; s < steps; s++)
        one_step(threads);
    step_gpu();
    if (do_fork) {
        fflush(stdout);
        pid_t pid = fork();
        if (pid == 0) {
            one_step(0);
            step_gpu();
            printf("host_wait: child %s\n", bad ? "FAILED" : "ok");
            fflush(stdout);
            _exit(bad ? 3 : 0);
        }
        int st = 0;
        while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
            ;
        if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
            bad = 1;
    }
    printf("host_wait: %d steps of %ld ms, %d threads each: %s\n", steps, stall_ms, threads, bad ? "FAILED" : "ok");
    return bad ? 3 : 0;
}
