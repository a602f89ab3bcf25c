/* nvtx_basic: NVTX v3 from NVIDIA's own headers (header-only), every kind
 * of range, mark and name the tracer records, around known CUDA work.
 *
 * Ground truth (asserted by tests/test_nvtx.py, which repeats it):
 *   main thread, named "main-thread":
 *     push "outer" (depth 0)
 *       cudaMalloc
 *       push L"wide é中" (depth 1, parent outer)
 *         mark "mark-1"; 1 launch of "inner_kernel"
 *       pop
 *       pushEx "payload-range" category 7, int64 payload -42 (depth 1, parent outer)
 *       pop
 *     pop
 *     domain "my-domain": category 3 named "io"; pushEx registered "registered-name",
 *       category 3, uint32 payload 7 (depth 0 in my-domain)
 *         push "default-in-domain" (depth 0 in the default domain, no parent)
 *       domain pop (each domain keeps its own stack: the two ranges cross)
 *         pop
 *       domain markEx "dmark" double payload 2.5
 *     category 1 named "cat-one"; stream s named "copy-stream"
 *     start "cross-thread" (ended by the worker thread)
 *     worker thread, named "worker": ends "cross-thread"; push "worker-range" with a
 *       cudaMemsetAsync on s inside; pop
 *     hostile names: 1000 'x' (cut to 256), "bad\xff\xfeutf8", an SQL quote, control
 *       characters, NULL (a range with no name); a wide mark "A", a surrogate, a value
 *       past U+10FFFF, "B" (each bad value U+FFFD)
 *     one pop too many (NVTX returns a negative level)
 *     push "left-open", never popped: open at exit
 *   argv[1] = "deep" N: N nested pushes of "level", then N pops.
 *   argv[1] = "hold": push "held", print "ready", then sleep (the test
 *     sends SIGTERM: the range is in the trace, open).
 *   argv[1] = "names" N: N ranges named "n0" to "nN-1", one after another
 *     (pausing every 1000 so the writer keeps up).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <cuda_runtime_api.h>
#include <nvtx3/nvToolsExt.h>
#include <nvtx3/nvToolsExtCudaRt.h>
#include "fakecuda.h"

static nvtxRangeId_t cross;
static cudaStream_t stream;
static void *dev;

static void check(cudaError_t e, const char *what)
{
    if (e != cudaSuccess) {
        fprintf(stderr, "nvtx_basic: %s failed: %s\n", what, cudaGetErrorString(e));
        exit(1);
    }
}

static void *worker(void *arg)
{
    (void)arg;
    nvtxNameOsThreadA((uint32_t)syscall(SYS_gettid), "worker");
    nvtxRangeEnd(cross);
    nvtxRangePushA("worker-range");
    check(cudaMemsetAsync(dev, 0, 4096, stream), "cudaMemsetAsync");
    nvtxRangePop();
    return NULL;
}

static int deep(int n)
{
    for (int i = 0; i < n; i++)
        if (nvtxRangePushA("level") != i)
            return 4;
    for (int i = n - 1; i >= 0; i--)
        if (nvtxRangePop() != i)
            return 5;
    check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
    return 0;
}

static int names(int n)
{
    char name[32];
    for (int i = 0; i < n; i++) {
        snprintf(name, sizeof(name), "n%d", i);
        nvtxRangePushA(name);
        nvtxRangePop();
        if (i % 1000 == 999)
            usleep(20000);
    }
    check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "deep") == 0)
        return deep(atoi(argv[2]));
    if (argc == 2 && strcmp(argv[1], "hold") == 0) {
        check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
        nvtxRangePushA("held");
        printf("ready\n");
        fflush(stdout);
        sleep(30);
        return 0;
    }
    if (argc == 3 && strcmp(argv[1], "names") == 0)
        return names(atoi(argv[2]));
    const void *k = fakecuda_runtime_kernel("inner_kernel", 0);
    nvtxNameOsThreadA((uint32_t)syscall(SYS_gettid), "main-thread");

    nvtxRangePushA("outer");
    check(cudaMalloc(&dev, 1 << 20), "cudaMalloc");
    nvtxRangePushW(L"wide \u00e9\u4e2d");
    nvtxMarkA("mark-1");
    void *args[] = {&dev};
    dim3 grid = {1, 1, 1}, block = {32, 1, 1};
    check(cudaLaunchKernel(k, grid, block, args, 0, NULL), "cudaLaunchKernel");
    nvtxRangePop();
    nvtxEventAttributes_t a = {0};
    a.version = NVTX_VERSION;
    a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    a.category = 7;
    a.payloadType = NVTX_PAYLOAD_TYPE_INT64;
    a.payload.llValue = -42;
    a.messageType = NVTX_MESSAGE_TYPE_ASCII;
    a.message.ascii = "payload-range";
    nvtxRangePushEx(&a);
    nvtxRangePop();
    nvtxRangePop();

    nvtxDomainHandle_t d = nvtxDomainCreateA("my-domain");
    nvtxDomainNameCategoryA(d, 3, "io");
    nvtxStringHandle_t h = nvtxDomainRegisterStringA(d, "registered-name");
    nvtxEventAttributes_t b = {0};
    b.version = NVTX_VERSION;
    b.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    b.category = 3;
    b.payloadType = NVTX_PAYLOAD_TYPE_UNSIGNED_INT32;
    b.payload.uiValue = 7;
    b.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
    b.message.registered = h;
    nvtxDomainRangePushEx(d, &b);
    nvtxRangePushA("default-in-domain");
    nvtxDomainRangePop(d); /* before the default domain's pop: the two ranges cross */
    nvtxRangePop();
    nvtxEventAttributes_t c = {0};
    c.version = NVTX_VERSION;
    c.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    c.payloadType = NVTX_PAYLOAD_TYPE_DOUBLE;
    c.payload.dValue = 2.5;
    c.messageType = NVTX_MESSAGE_TYPE_ASCII;
    c.message.ascii = "dmark";
    nvtxDomainMarkEx(d, &c);

    nvtxNameCategoryA(1, "cat-one");
    check(cudaStreamCreate(&stream), "cudaStreamCreate");
    nvtxNameCudaStreamA(stream, "copy-stream");

    cross = nvtxRangeStartA("cross-thread");
    pthread_t t;
    pthread_create(&t, NULL, worker, NULL);
    pthread_join(t, NULL);

    char longname[1001];
    memset(longname, 'x', 1000);
    longname[1000] = 0;
    nvtxRangePushA(longname);
    nvtxRangePop();
    nvtxRangePushA("bad\xff\xfeutf8");
    nvtxRangePop();
    nvtxRangePushA("quote' \"; DROP TABLE nvtx_ranges; --");
    nvtxRangePop();
    nvtxRangePushA("ctrl\n\t\x01" "end");
    nvtxRangePop();
    nvtxRangePushA(NULL);
    nvtxRangePop();
    wchar_t badw[] = {L'A', (wchar_t)0xD800, (wchar_t)0x110000, L'B', 0};
    nvtxMarkW(badw);

    int extra = nvtxRangePop();
    nvtxRangePushA("left-open");
    check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
    printf("nvtx_basic: extra pop %d\n", extra);
    return 0;
}
