/* native_wait: a C++ program whose main thread blocks in its own functions
 * while the GPU waits, with answers set here (tests/test_samples_native.py).
 * Each step: a kernel and a sync, then
 *   load_batch():     std::this_thread::sleep_for of STALL_MS (blocked in
 *                     clock_nanosleep, under libc's nanosleep)
 *   wait_for_batch(): a std::condition_variable wait until a loader thread
 *                     (std::thread, never calling CUDA) has slept STALL_MS
 *                     and made the batch ready (blocked in futex, under
 *                     libstdc++ and libc)
 * each stall ended by the next launch; last, sync_long() waits 60 ms in
 * cudaDeviceSynchronize for a long kernel (blocked inside a CUDA call,
 * under the tracer's hook, while the GPU is busy). The lines the test expects are
 * marked "marker: FUNCTION". Built -O2 -g, -O3 without -g and -O0 -g
 * (tests.mk): the sampler unwinds the blocked thread from .eh_frame alone.
 * With TICK_US > 0 a ticker thread (never calling CUDA) sleeps TICK_US at a
 * time for the whole run: blocked nearly always, awake every few tens of
 * microseconds, so the sampler's walks of its stack race its wake-ups.
 * Prints what it did, and on stderr the time it spent in each of the two
 * (its own log, which the test compares the report's shares with);
 * exits 0, or 3 when a sleep returned early.
 *   native_wait STEPS STALL_MS [TICK_US] */
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <thread>

#include <cuda_runtime_api.h>
#include "fakecuda.h"

static const void *kern, *long_kern;
static long stall_ms;
static bool bad;
static std::mutex mu;
static std::condition_variable cv;
static int ready;
static std::atomic<bool> stop_ticker;
static long ticks;

__attribute__((noinline)) static void ticker(long us)
{
    while (!stop_ticker.load()) {
        std::this_thread::sleep_for(std::chrono::microseconds(us)); // marker: ticker
        ticks++;
    }
}

static void step_gpu()
{
    dim3 g(1, 1, 1), b(32, 1, 1);
    cudaLaunchKernel(kern, g, b, nullptr, 0, nullptr);
    cudaDeviceSynchronize();
}

/* The sleep is not its last call (the check after it), so the frame stays. */
__attribute__((noinline)) static double load_batch()
{
    auto t0 = std::chrono::steady_clock::now();
    std::this_thread::sleep_for(std::chrono::milliseconds(stall_ms)); // marker: load_batch
    double took = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    if (took < (double)stall_ms)
        bad = true;
    return took;
}

static void loader()
{
    std::this_thread::sleep_for(std::chrono::milliseconds(stall_ms));
    {
        std::lock_guard<std::mutex> g(mu);
        ready = 1;
    }
    cv.notify_one();
}

__attribute__((noinline)) static int wait_for_batch(double *ms)
{
    auto t0 = std::chrono::steady_clock::now();
    std::thread t(loader);
    int got;
    {
        std::unique_lock<std::mutex> lk(mu);
        cv.wait(lk, [] { return ready != 0; }); // marker: wait_for_batch
        got = ready;
        ready = 0;
    }
    *ms += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    t.join();
    return got;
}

__attribute__((noinline)) static void sync_long()
{
    dim3 g(1, 1, 1), b(32, 1, 1);
    cudaLaunchKernel(long_kern, g, b, nullptr, 0, nullptr);
    cudaDeviceSynchronize(); // marker: sync_long
    std::fflush(stdout); /* not a tail call: the frame stays */
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        std::fprintf(stderr, "usage: native_wait STEPS STALL_MS\n");
        return 2;
    }
    int steps = std::atoi(argv[1]);
    stall_ms = std::atol(argv[2]);
    long tick_us = argc > 3 ? std::atol(argv[3]) : 0;
    std::thread tick;
    if (tick_us > 0)
        tick = std::thread(ticker, tick_us);
    kern = fakecuda_runtime_kernel("native_wait_kernel", 100000);
    long_kern = fakecuda_runtime_kernel("native_wait_long", 60000000);
    double slept = 0, waited = 0;
    int batches = 0;
    for (int s = 0; s < steps; s++) {
        step_gpu();
        slept += load_batch();
        step_gpu();
        batches += wait_for_batch(&waited);
    }
    step_gpu();
    sync_long();
    if (tick_us > 0) {
        stop_ticker = true;
        tick.join();
        if (ticks == 0)
            bad = true;
    }
    std::printf("native_wait: %d steps of %ld ms, %d batches: %s\n", steps, stall_ms, batches, bad ? "FAILED" : "ok");
    std::fprintf(stderr, "native_wait: load_batch %.3f ms, wait_for_batch %.3f ms\n", slept, waited);
    return bad ? 3 : 0;
}
