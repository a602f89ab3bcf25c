/* odd_names: names that are not UTF-8 and hold control characters, as a
 * program may give them (tests/test_outputs_valid.py). Every output the
 * analyzer writes from this trace must be valid in its format.
 *
 * Ground truth:
 *   main thread named "thr\xff\x1b[31m" (pthread_setname_np)
 *   NVTX push "step\xff\xfe \x01ctl\"q\\ \xc3" (a cut sequence), then
 *     3 launches of kernel "k\xe9rn\x80" "el\x07\t\"x\\" (Latin-1 e-acute, a lone
 *     continuation byte, BEL, tab, a quote, a backslash), 2 of
 *     "\xed\xa0\x80" "surrogate\xf4\x90\x80\x80" (a UTF-16 surrogate and a
 *     code point past U+10FFFF, encoded), then a sync; pop
 *   NVTX push "ok \xe2\x9c\x93" (valid UTF-8, kept as it is); 1 launch of
 *     "fine_\xc3\xa9"; pop
 *   argv[1] = N: then N launches of a kernel named with 60 two-byte and 30
 *     three-byte characters ("\xc3\xa9" x 60, "\xe2\x9c\x93" x 30), so
 *     outputs are long and their writes cut sequences in two.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <cuda_runtime_api.h>
#include <nvtx3/nvToolsExt.h>
#include "fakecuda.h"

static void check(cudaError_t e, const char *what)
{
    if (e != cudaSuccess) {
        fprintf(stderr, "odd_names: %s failed: %s\n", what, cudaGetErrorString(e));
        exit(1);
    }
}

static void launch(const void *k, int n)
{
    dim3 grid = {1, 1, 1}, block = {32, 1, 1};
    for (int i = 0; i < n; i++) {
        void *args[] = {NULL};
        check(cudaLaunchKernel(k, grid, block, args, 0, 0), "cudaLaunchKernel");
    }
}

int main(int argc, char **argv)
{
    pthread_setname_np(pthread_self(), "thr\xff\x1b[31m");
    const void *bad = fakecuda_runtime_kernel("k\xe9rn\x80" "el\x07\t\"x\\", 20000);
    const void *sur = fakecuda_runtime_kernel("\xed\xa0\x80" "surrogate\xf4\x90\x80\x80", 20000);
    const void *fine = fakecuda_runtime_kernel("fine_\xc3\xa9", 20000);
    nvtxRangePushA("step\xff\xfe \x01" "ctl\"q\\ \xc3");
    launch(bad, 3);
    launch(sur, 2);
    check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
    nvtxRangePop();
    nvtxRangePushA("ok \xe2\x9c\x93");
    launch(fine, 1);
    check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
    nvtxRangePop();
    int more = argc > 1 ? atoi(argv[1]) : 0;
    if (more > 0) {
        char name[256], *p = name;
        for (int i = 0; i < 60; i++)
            p += sprintf(p, "\xc3\xa9");
        for (int i = 0; i < 30; i++)
            p += sprintf(p, "\xe2\x9c\x93");
        launch(fakecuda_runtime_kernel(name, 2000), more);
        check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
    }
    printf("odd_names: %d launches\n", 6 + (more > 0 ? more : 0));
    return 0;
}
