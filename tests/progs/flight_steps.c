/* flight_steps: a training loop for the flight recorder's tests
 * (tests/test_flight.py).
 *   flight_steps STEPS STEP_MS SLOW SLOW_MS LOG MODE
 * Each step i: push "train_step", launch step_kernel; in step SLOW alone,
 * launch marker_kernel too and sleep SLOW_MS instead of STEP_MS; pop.
 * MODE:
 *   run      just that
 *   segv:K   after step K's pop, a write through a null pointer (SIGSEGV)
 *   hang:K   a rank of a simulated job (FAKECUDA_JOB, RANK): each step also
 *            launches ncclDevKernel_AllReduce_Sum_f32_RING_LL and then
 *            cudaStreamSynchronize(0); in step K rank 1 stops before its
 *            collective (it sleeps until killed), so rank 0's collective
 *            never meets its peer and its sync never returns
 * Every CUDA call is logged as it ends, one line written at once (a crash
 * or a kill leaves the log whole): "call STEP NAME T0 T1" (CLOCK_MONOTONIC
 * ns around the call; T1 0 for a call logged before it is made, "enter"),
 * and "step I T0 T1" at each pop. Prints "ready" after its first call. */
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <cuda_runtime_api.h>
#include <nvtx3/nvToolsExt.h>
#include "fakecuda.h"

static int log_fd = -1;

static unsigned long now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (unsigned long)ts.tv_sec * 1000000000ul + (unsigned long)ts.tv_nsec;
}

static void log_line(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void log_line(const char *fmt, ...)
{
    char buf[256];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    if (n > 0 && write(log_fd, buf, (size_t)n) != n)
        _exit(3);
}

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0)
        ;
}

static void launch(int step, const char *name, const void *k)
{
    dim3 g = {1, 1, 1}, b = {32, 1, 1};
    unsigned long t0 = now_ns();
    cudaLaunchKernel(k, g, b, NULL, 0, NULL);
    log_line("call %d %s %lu %lu\n", step, name, t0, now_ns());
}

int main(int argc, char **argv)
{
    if (argc < 7)
        return 2;
    int steps = atoi(argv[1]), slow = atoi(argv[3]);
    long step_ms = atol(argv[2]), slow_ms = atol(argv[4]);
    const char *mode = argv[6];
    int segv_at = strncmp(mode, "segv:", 5) == 0 ? atoi(mode + 5) : -1;
    int hang_at = strncmp(mode, "hang:", 5) == 0 ? atoi(mode + 5) : -1;
    const char *rank_s = getenv("RANK");
    int rank = rank_s ? atoi(rank_s) : 0;
    log_fd = open(argv[5], O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0644);
    if (log_fd < 0)
        return 2;
    const void *k = fakecuda_runtime_kernel("step_kernel", 10000);
    const void *marker = fakecuda_runtime_kernel("marker_kernel", 10000);
    const void *allreduce = fakecuda_runtime_kernel("ncclDevKernel_AllReduce_Sum_f32_RING_LL", 0);
    void *p;
    unsigned long t0 = now_ns();
    cudaMalloc(&p, 256);
    log_line("call -1 cudaMalloc %lu %lu\n", t0, now_ns());
    printf("ready\n");
    fflush(stdout);
    for (int i = 0; i < steps; i++) {
        unsigned long s0 = now_ns();
        nvtxRangePushA("train_step");
        launch(i, "step_kernel", k);
        if (i == slow)
            launch(i, "marker_kernel", marker);
        if (hang_at >= 0) {
            if (i == hang_at && rank == 1)
                for (;;)
                    pause(); /* the peer that never comes */
            launch(i, "ncclDevKernel_AllReduce_Sum_f32_RING_LL", allreduce);
            unsigned long y0 = now_ns();
            log_line("call %d cudaStreamSynchronize %lu 0 enter\n", i, y0);
            cudaStreamSynchronize(0);
            log_line("call %d cudaStreamSynchronize %lu %lu\n", i, y0, now_ns());
        }
        sleep_ms(i == slow ? slow_ms : step_ms);
        nvtxRangePop();
        log_line("step %d %lu %lu\n", i, s0, now_ns());
        if (i == segv_at)
            *(volatile int *)(uintptr_t)argc = 1; /* argc is no address: SIGSEGV */
    }
    t0 = now_ns();
    cudaDeviceSynchronize();
    log_line("call -2 cudaDeviceSynchronize %lu %lu\n", t0, now_ns());
    return 0;
}
