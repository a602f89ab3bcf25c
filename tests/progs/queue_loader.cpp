/* queue_loader: a C++ pipeline whose launching thread only waits
 * (tests/test_idle_threads.py, issue 36): a std::thread loader, which
 * never calls CUDA, builds each batch by computing for BUILD_MS in
 * build_batch(); the main thread waits on a std::condition_variable for
 * it, then copies the batch to the GPU and launches. The loader builds
 * the next batch only once the main thread took the last one, so the GPU
 * waits for each build. The line the test expects is marked
 * "marker: build_batch". Built -O3 without -g and -O0 -g (tests.mk).
 * Prints what it did; on stderr its own log: the loader's thread id and
 * the milliseconds it spent in build_batch.
 *   queue_loader STEPS BUILD_MS */
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <thread>
#include <unistd.h>
#include <sys/syscall.h>

#include <cuda_runtime_api.h>
#include "fakecuda.h"

static std::mutex mu;
static std::condition_variable cv;
static int ready, taken = 1;
static unsigned char buf[1 << 16];
static volatile unsigned long sink;

/* Computes until ms have passed: rounds of a hash over the buffer. */
__attribute__((noinline)) static unsigned long build_batch(long ms)
{
    auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
    unsigned long x = 1;
    do {
        for (int r = 0; r < 64; r++)
            for (unsigned i = 0; i < sizeof(buf); i++) x = x * 31 + buf[i] + (x >> 7); // marker: build_batch
    } while (std::chrono::steady_clock::now() < end);
    return x;
}

static void loader(int steps, long ms, double *spent)
{
    std::fprintf(stderr, "queue_loader: loader tid %ld\n", (long)syscall(SYS_gettid));
    for (int s = 0; s < steps; s++) {
        {
            std::unique_lock<std::mutex> lk(mu);
            cv.wait(lk, [] { return taken != 0; });
            taken = 0;
        }
        auto t0 = std::chrono::steady_clock::now();
        sink = build_batch(ms);
        *spent += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
        {
            std::lock_guard<std::mutex> g(mu);
            ready = 1;
        }
        cv.notify_all();
    }
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        std::fprintf(stderr, "usage: queue_loader STEPS BUILD_MS\n");
        return 2;
    }
    int steps = std::atoi(argv[1]);
    long ms = std::atol(argv[2]);
    for (unsigned i = 0; i < sizeof(buf); i++)
        buf[i] = (unsigned char)(i * 7919u >> 3);
    const void *kern = fakecuda_runtime_kernel("queue_loader_kernel", 100000);
    void *dev = nullptr;
    cudaMalloc(&dev, sizeof(buf));
    dim3 g(1, 1, 1), b(32, 1, 1);
    cudaLaunchKernel(kern, g, b, nullptr, 0, nullptr);
    cudaDeviceSynchronize();
    double spent = 0;
    std::thread t(loader, steps, ms, &spent);
    for (int s = 0; s < steps; s++) {
        {
            std::unique_lock<std::mutex> lk(mu);
            cv.wait(lk, [] { return ready != 0; });
            ready = 0;
            taken = 1;
        }
        cv.notify_all();
        cudaMemcpy(dev, buf, sizeof(buf), cudaMemcpyHostToDevice);
        cudaLaunchKernel(kern, g, b, nullptr, 0, nullptr);
        cudaDeviceSynchronize();
    }
    t.join();
    cudaFree(dev);
    std::printf("queue_loader: %d steps of %ld ms: ok\n", steps, ms);
    std::fprintf(stderr, "queue_loader: build_batch %.3f ms\n", spent);
    return 0;
}
