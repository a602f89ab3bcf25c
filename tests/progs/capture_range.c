/* capture_range: capture ranges' ground truth (tests/test_capture_range.py).
 *   capture_range HOW RANGES
 * HOW says how each range is opened and closed:
 *   rt      cudaProfilerStart / cudaProfilerStop
 *   drv     cuProfilerStart / cuProfilerStop
 *   none    never: the same calls, no range
 *   nvtx    nvtxRangePushA("capture") / nvtxRangePop, on the default domain
 *   startend nvtxRangeStartA("capture") / nvtxRangeEnd
 *   domain  nvtxDomainRangePushEx(domain "dom", "capture") / nvtxDomainRangePop
 *   registered nvtxRangePushEx with the registered string "capture" / nvtxRangePop
 * The program:
 *   cudaMalloc; 3 launches of `before`; a 1000-byte cudaMemcpy HtoD
 *   RANGES x (r = 1..RANGES):
 *     [nvtx modes: push "capture" on the default domain in domain mode, and
 *      "other" on "dom" in the other NVTX modes: ranges that must not match]
 *     open range r
 *       r+1 launches of `in_rR`; [nvtx modes: push "inner" ... pop around
 *       them, nested: not the range's end]; a cudaMemcpy HtoD of r*4096
 *       bytes; a cudaMemset; cudaDeviceSynchronize
 *       [rt/drv: a second start inside: changes nothing]
 *     close range r
 *     [rt/drv: a second stop outside: changes nothing]
 *     2 launches of `between`
 *   2 launches of `after`; cudaDeviceSynchronize
 * and prints, per range, "range R calls C launches L bytes B" (the CUDA
 * calls made inside it), then "done". Exits 0. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cuda.h>
#include <cudaProfiler.h>
#include <cuda_profiler_api.h>
#include <cuda_runtime_api.h>
#include <nvtx3/nvToolsExt.h>
#include "fakecuda.h"

static nvtxDomainHandle_t dom;

static void launch(const char *name, int n)
{
    const void *k = fakecuda_runtime_kernel(name, 20000);
    dim3 g = {1, 1, 1}, b = {32, 1, 1};
    for (int i = 0; i < n; i++)
        cudaLaunchKernel(k, g, b, NULL, 0, NULL);
}

static nvtxRangeId_t range_open(const char *how)
{
    nvtxEventAttributes_t a;
    memset(&a, 0, sizeof(a));
    a.version = NVTX_VERSION;
    a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    a.messageType = NVTX_MESSAGE_TYPE_ASCII;
    if (strcmp(how, "rt") == 0)
        cudaProfilerStart();
    else if (strcmp(how, "drv") == 0)
        cuProfilerStart();
    else if (strcmp(how, "nvtx") == 0)
        nvtxRangePushA("capture");
    else if (strcmp(how, "registered") == 0) {
        a.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
        a.message.registered = nvtxDomainRegisterStringA(NULL, "capture");
        nvtxRangePushEx(&a);
    }
    else if (strcmp(how, "startend") == 0)
        return nvtxRangeStartA("capture");
    else if (strcmp(how, "domain") == 0) {
        a.message.ascii = "capture";
        nvtxDomainRangePushEx(dom, &a);
    }
    return 0;
}

static void range_close(const char *how, nvtxRangeId_t id)
{
    if (strcmp(how, "rt") == 0)
        cudaProfilerStop();
    else if (strcmp(how, "drv") == 0)
        cuProfilerStop();
    else if (strcmp(how, "nvtx") == 0 || strcmp(how, "registered") == 0)
        nvtxRangePop();
    else if (strcmp(how, "startend") == 0)
        nvtxRangeEnd(id);
    else if (strcmp(how, "domain") == 0)
        nvtxDomainRangePop(dom);
}

int main(int argc, char **argv)
{
    if (argc < 3)
        return 2;
    const char *how = argv[1];
    int ranges = atoi(argv[2]);
    int nvtx = strcmp(how, "nvtx") == 0 || strcmp(how, "startend") == 0 || strcmp(how, "domain") == 0 ||
               strcmp(how, "registered") == 0;
    int prof = strcmp(how, "rt") == 0 || strcmp(how, "drv") == 0;
    dom = nvtxDomainCreateA("dom");
    void *d = NULL;
    static char host[1 << 16];
    cudaMalloc(&d, sizeof(host));
    launch("before", 3);
    cudaMemcpy(d, host, 1000, cudaMemcpyHostToDevice);
    for (int r = 1; r <= ranges; r++) {
        /* A range of the same name in another domain, or in the default
         * domain when the rule names "dom": never a capture range. */
        nvtxEventAttributes_t a;
        memset(&a, 0, sizeof(a));
        a.version = NVTX_VERSION;
        a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
        a.messageType = NVTX_MESSAGE_TYPE_ASCII;
        a.message.ascii = "capture";
        if (nvtx) {
            if (strcmp(how, "domain") == 0)
                nvtxRangePushA("capture");
            else
                nvtxDomainRangePushEx(dom, &a);
            launch("decoy", 1);
            if (strcmp(how, "domain") == 0)
                nvtxRangePop();
            else
                nvtxDomainRangePop(dom);
        }
        char name[32];
        snprintf(name, sizeof(name), "in_r%d", r);
        nvtxRangeId_t id = range_open(how);
        if (nvtx)
            nvtxRangePushA("inner");
        launch(name, r + 1);
        if (nvtx)
            nvtxRangePop();
        cudaMemcpy(d, host, (size_t)r * 4096, cudaMemcpyHostToDevice);
        cudaMemset(d, 0, 512);
        if (prof)
            cudaProfilerStart(); /* already started: nothing changes */
        cudaDeviceSynchronize();
        range_close(how, id);
        if (prof)
            cudaProfilerStop(); /* already stopped: nothing changes */
        launch("between", 2);
        printf("range %d calls %d launches %d bytes %d\n", r, r + 4, r + 1, r * 4096);
    }
    launch("after", 2);
    cudaDeviceSynchronize();
    printf("done\n");
    return 0;
}
