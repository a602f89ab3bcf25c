/* dl_race: the program's first CUDA calls made while other threads load
 * and unload a library in a loop, as Python and PyTorch load extension
 * modules on threads of their own. The tracer resolves each real CUDA
 * function on its first call; done under the loader's locks in the wrong
 * order, that once deadlocked against a concurrent dlopen.
 *
 * Usage: dl_race LIBRARY ROUNDS. Prints "dl_race: ok" at the end. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <cuda_runtime_api.h>

static const char *lib;
static atomic_int stop;

static void *hammer(void *arg)
{
    (void)arg;
    while (!atomic_load(&stop)) {
        void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
        if (h)
            dlclose(h);
    }
    return NULL;
}

static void check(cudaError_t e, const char *what)
{
    if (e != cudaSuccess) {
        fprintf(stderr, "dl_race: %s failed: %s\n", what, cudaGetErrorString(e));
        exit(1);
    }
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: dl_race LIBRARY ROUNDS\n");
        return 2;
    }
    lib = argv[1];
    pthread_t t[2];
    for (int i = 0; i < 2; i++)
        pthread_create(&t[i], NULL, hammer, NULL);
    int rounds = atoi(argv[2]);
    void *dev, *host;
    cudaStream_t s;
    check(cudaMalloc(&dev, 4096), "cudaMalloc");
    check(cudaMallocHost(&host, 4096), "cudaMallocHost");
    check(cudaStreamCreate(&s), "cudaStreamCreate");
    for (int r = 0; r < rounds; r++) {
        check(cudaMemcpy(dev, host, 4096, cudaMemcpyHostToDevice), "cudaMemcpy");
        check(cudaMemcpyAsync(host, dev, 4096, cudaMemcpyDeviceToHost, s), "cudaMemcpyAsync");
        check(cudaMemset(dev, 0, 4096), "cudaMemset");
        check(cudaMemsetAsync(dev, 1, 4096, s), "cudaMemsetAsync");
        check(cudaStreamSynchronize(s), "cudaStreamSynchronize");
        check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
    }
    check(cudaStreamDestroy(s), "cudaStreamDestroy");
    check(cudaFreeHost(host), "cudaFreeHost");
    check(cudaFree(dev), "cudaFree");
    atomic_store(&stop, 1);
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    printf("dl_race: ok\n");
    return 0;
}
