/* truth_random: runs a script of CUDA commands, for the property test in
 * tests/test_truth.py (which writes random scripts from fixed seeds).
 *   truth_random SCRIPT
 * One command a line, whitespace-separated; '#' starts a comment. Streams
 * are numbered per device: 0 the legacy default stream, 1 a created
 * blocking stream, 2 and 3 created non-blocking streams. Kernels are named
 * in the script (their durations come from FAKECUDA_KERNEL_NS).
 *   D dev                     make dev the current device (FAKECUDA_DEVICES)
 *   K name s                  launch kernel `name` on stream s
 *   C dir mem mode bytes s    copy: dir h2d|d2h|d2d, mem pageable|pinned,
 *                             mode sync (cudaMemcpy) | async (cudaMemcpyAsync on s)
 *   M bytes s                 cudaMemsetAsync on s
 *   B s n bytes...            cudaMemcpyBatchAsync of n host-to-device copies from pinned memory
 *   Y device                  cudaDeviceSynchronize
 *   Y stream s                cudaStreamSynchronize
 *   Y event s                 cudaEventRecord on s, then cudaEventSynchronize
 *   W s1 s2                   cudaEventRecord on s1, cudaStreamWaitEvent on s2
 *   H us                      host sleep (usleep)
 *   G s n reps                capture n launches of g_k<i> and a 4096-byte memset on
 *                             stream s (1 to 3) into a graph, launch it reps times
 *   F                         a failing call: cudaMemcpy to NULL (cudaErrorInvalidValue)
 *   T n                       a thread on the current device: n launches of thr_k on its
 *                             own non-blocking stream, then a sync of that stream
 *   J                         join the threads started so far
 * Every command runs in a function of its own, so each has its own call site. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cuda_runtime_api.h>
#include "fakecuda.h"

#define MAXDEV 4
#define BUF (16u << 20)

static struct {
    cudaStream_t s[4];
    char *dev;
} devs[MAXDEV];
static int ndev, cur;
static char *pinned, *pageable;

static const void *kernel(const char *name)
{
    static struct {
        char name[64];
        const void *k;
    } tab[64];
    static int n;
    static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
    const void *k = NULL;
    pthread_mutex_lock(&mu);
    for (int i = 0; i < n && !k; i++)
        if (strcmp(tab[i].name, name) == 0)
            k = tab[i].k;
    if (!k && n < 64) {
        snprintf(tab[n].name, sizeof(tab[n].name), "%s", name);
        k = tab[n].k = fakecuda_runtime_kernel(tab[n].name, 0);
        n++;
    }
    pthread_mutex_unlock(&mu);
    return k;
}

static cudaStream_t stream(int i) { return devs[cur].s[i & 3]; }

__attribute__((noinline)) static void do_launch(const char *name, int s)
{
    dim3 g = {1, 1, 1}, b = {32, 1, 1};
    cudaLaunchKernel(kernel(name), g, b, NULL, 0, stream(s));
}

__attribute__((noinline)) static void do_copy(const char *dir, const char *mem, const char *mode, size_t n, int s)
{
    char *h = strcmp(mem, "pinned") == 0 ? pinned : pageable, *d = devs[cur].dev;
    if (n > BUF / 2)
        n = BUF / 2;
    void *dst = d, *src = h;
    enum cudaMemcpyKind kind = cudaMemcpyHostToDevice;
    if (strcmp(dir, "d2h") == 0)
        dst = h, src = d, kind = cudaMemcpyDeviceToHost;
    else if (strcmp(dir, "d2d") == 0)
        dst = d + BUF / 2, src = d, kind = cudaMemcpyDeviceToDevice;
    if (strcmp(mode, "sync") == 0)
        cudaMemcpy(dst, src, n, kind);
    else
        cudaMemcpyAsync(dst, src, n, kind, stream(s));
}

__attribute__((noinline)) static void do_memset(size_t n, int s)
{
    cudaMemsetAsync(devs[cur].dev, 0, n > BUF ? BUF : n, stream(s));
}

__attribute__((noinline)) static void do_batch(int s, int n, const size_t *sizes)
{
    void *dsts[16];
    const void *srcs[16];
    size_t off = 0;
    for (int i = 0; i < n; i++) {
        dsts[i] = devs[cur].dev + off;
        srcs[i] = pinned + off;
        off += sizes[i];
    }
    struct cudaMemcpyAttributes attr;
    memset(&attr, 0, sizeof(attr));
    attr.srcAccessOrder = cudaMemcpySrcAccessOrderStream;
    size_t idx = 0;
    cudaMemcpyBatchAsync(dsts, srcs, sizes, (size_t)n, &attr, &idx, 1, stream(s));
}

__attribute__((noinline)) static void do_sync_device(void) { cudaDeviceSynchronize(); }
__attribute__((noinline)) static void do_sync_stream(int s) { cudaStreamSynchronize(stream(s)); }

__attribute__((noinline)) static void do_sync_event(int s)
{
    cudaEvent_t e;
    cudaEventCreate(&e);
    cudaEventRecord(e, stream(s));
    cudaEventSynchronize(e);
    cudaEventDestroy(e);
}

__attribute__((noinline)) static void do_wait(int s1, int s2)
{
    cudaEvent_t e;
    cudaEventCreate(&e);
    cudaEventRecord(e, stream(s1));
    cudaStreamWaitEvent(stream(s2), e, 0);
    cudaEventDestroy(e);
}

__attribute__((noinline)) static void do_sleep(unsigned us) { usleep(us); }

__attribute__((noinline)) static void do_capture_body(cudaStream_t s, int n)
{
    dim3 g = {2, 1, 1}, b = {64, 1, 1};
    char name[16];
    for (int i = 0; i < n; i++) {
        snprintf(name, sizeof(name), "g_k%d", i);
        cudaLaunchKernel(kernel(name), g, b, NULL, 0, s);
        if (i == 0)
            cudaMemsetAsync(devs[cur].dev, 0, 4096, s);
    }
}

__attribute__((noinline)) static void do_graph_launches(cudaGraphExec_t exec, cudaStream_t s, int reps)
{
    for (int i = 0; i < reps; i++)
        cudaGraphLaunch(exec, s);
}

__attribute__((noinline)) static void do_graph(int si, int n, int reps)
{
    cudaStream_t s = stream(si ? si : 1);
    cudaGraph_t graph;
    cudaGraphExec_t exec;
    if (cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal) != cudaSuccess)
        return;
    do_capture_body(s, n);
    if (cudaStreamEndCapture(s, &graph) != cudaSuccess)
        return;
    if (cudaGraphInstantiate(&exec, graph, 0) == cudaSuccess) {
        do_graph_launches(exec, s, reps);
        cudaGraphExecDestroy(exec);
    }
    cudaGraphDestroy(graph);
}

__attribute__((noinline)) static void do_fail(void) { cudaMemcpy(NULL, pageable, 64, cudaMemcpyHostToDevice); }

struct thr {
    int device, n;
};

__attribute__((noinline)) static void thread_launches(cudaStream_t s, int n)
{
    dim3 g = {1, 1, 1}, b = {32, 1, 1};
    const void *k = kernel("thr_k");
    for (int i = 0; i < n; i++)
        cudaLaunchKernel(k, g, b, NULL, 0, s);
}

static void *thread_main(void *arg)
{
    struct thr *t = arg;
    cudaStream_t s;
    cudaSetDevice(t->device);
    cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
    thread_launches(s, t->n);
    cudaStreamSynchronize(s);
    cudaStreamDestroy(s);
    free(t);
    return NULL;
}

static pthread_t threads[64];
static int nthreads;

static void join_all(void)
{
    for (int i = 0; i < nthreads; i++)
        pthread_join(threads[i], NULL);
    nthreads = 0;
}

__attribute__((noinline)) static int run(FILE *f)
{
    char line[1024];
    int lineno = 0;
    while (fgets(line, sizeof(line), f)) {
        lineno++;
        char *hash = strchr(line, '#');
        if (hash)
            *hash = 0;
        char *tok[24];
        int nt = 0;
        for (char *p = strtok(line, " \t\r\n"); p && nt < 24; p = strtok(NULL, " \t\r\n"))
            tok[nt++] = p;
        if (!nt)
            continue;
        char c = tok[0][0];
#define ARG(i) (nt > (i) ? tok[i] : "0")
#define NUM(i) atol(ARG(i))
        if (c == 'D') {
            int d = (int)NUM(1);
            if (d >= 0 && d < ndev) {
                cur = d;
                cudaSetDevice(d);
            }
        } else if (c == 'K') {
            do_launch(ARG(1), (int)NUM(2));
        } else if (c == 'C') {
            do_copy(ARG(1), ARG(2), ARG(3), (size_t)NUM(4), (int)NUM(5));
        } else if (c == 'M') {
            do_memset((size_t)NUM(1), (int)NUM(2));
        } else if (c == 'B') {
            size_t sizes[16];
            int n = (int)NUM(2);
            if (n > 16 || n > nt - 3)
                n = n > 16 ? 16 : nt - 3;
            size_t total = 0;
            for (int i = 0; i < n; i++) {
                sizes[i] = (size_t)NUM(3 + i);
                total += sizes[i];
            }
            if (total <= BUF && n > 0)
                do_batch((int)NUM(1), n, sizes);
        } else if (c == 'Y') {
            if (strcmp(ARG(1), "device") == 0)
                do_sync_device();
            else if (strcmp(ARG(1), "stream") == 0)
                do_sync_stream((int)NUM(2));
            else
                do_sync_event((int)NUM(2));
        } else if (c == 'W') {
            do_wait((int)NUM(1), (int)NUM(2));
        } else if (c == 'H') {
            do_sleep((unsigned)NUM(1));
        } else if (c == 'G') {
            do_graph((int)NUM(1), (int)NUM(2), (int)NUM(3));
        } else if (c == 'F') {
            do_fail();
        } else if (c == 'T') {
            struct thr *t = malloc(sizeof(*t));
            t->device = cur;
            t->n = (int)NUM(1);
            if (nthreads < 64)
                pthread_create(&threads[nthreads++], NULL, thread_main, t);
            else
                free(t);
        } else if (c == 'J') {
            join_all();
        } else {
            fprintf(stderr, "truth_random: line %d: unknown command %s\n", lineno, tok[0]);
            return 2;
        }
    }
    join_all();
    return 0;
}

int main(int argc, char **argv)
{
    FILE *f = argc > 1 ? fopen(argv[1], "r") : stdin;
    if (!f) {
        perror(argv[1]);
        return 2;
    }
    if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev < 1)
        return 1;
    if (ndev > MAXDEV)
        ndev = MAXDEV;
    pinned = NULL;
    if (cudaMallocHost((void **)&pinned, BUF) != cudaSuccess || !(pageable = malloc(BUF)))
        return 1;
    memset(pageable, 1, BUF);
    memset(pinned, 2, BUF);
    for (int d = 0; d < ndev; d++) {
        cudaSetDevice(d);
        devs[d].s[0] = NULL;
        cudaStreamCreate(&devs[d].s[1]);
        cudaStreamCreateWithFlags(&devs[d].s[2], cudaStreamNonBlocking);
        cudaStreamCreateWithFlags(&devs[d].s[3], cudaStreamNonBlocking);
        if (cudaMalloc((void **)&devs[d].dev, BUF) != cudaSuccess)
            return 1;
    }
    cudaSetDevice(0);
    int rc = run(f);
    for (int d = 0; d < ndev; d++) {
        cudaSetDevice(d);
        cudaDeviceSynchronize();
    }
    printf("truth_random: done\n");
    return rc;
}
