/* cupti_client: a program with a CUPTI activity collector of its own, as
 * the PyTorch profiler (Kineto) has: it registers its own buffers, enables
 * kinds for a while, flushes, and prints every record its bufferCompleted
 * got (sorted, one line each: kind, then name or bytes, then CUPTI's
 * correlation id), then "records N", "foreign_buffers N" (buffers handed
 * to it that it never lent) and "bad_walks N" (buffers whose records
 * cuptiActivityGetNextRecord does not walk to validSize exactly).
 * Traced or not, the output must be the same. argv[1] picks the scenario:
 *   phases    100 "before" kernels, then buffers and CONCURRENT_KERNEL for
 *             100 "during", disabled, 100 "after" (the program)
 *   kinds     KERNEL, MEMCPY, MEMSET and DRIVER (a kind the tracer does
 *             not record) on for 20 kernels, 5 copies and 5 memsets, with
 *             10 of each before and after
 *   repeat    CONCURRENT_KERNEL on and off 5 times, 10 "on_i" kernels
 *             while on, 10 "off_i" while off
 *   finalize  CONCURRENT_KERNEL on for 50 "k1", cuptiFinalize, 50 "k2",
 *             then registered and enabled again for 20 "k3", then 30 "k4"
 *             with the kind off
 *   ext       EXTERNAL_CORRELATION, CONCURRENT_KERNEL and cudaLaunchKernel's API
 *             records on (without API records CUPTI writes no external
 *             correlation); 20 kernels
 *             each under two external ids at once (CUSTOM0 1000+i,
 *             CUSTOM1 5000+i); 10 "bare" kernels under none
 *   range     CONCURRENT_KERNEL on for 50 "pre" kernels, then between
 *             cudaProfilerStart and cudaProfilerStop 50 "in", then 50
 *             "post", then off for 50 "off" (a capture range's window opens
 *             after the program's collector started, and closes before it
 *             ends)
 *   threads   4 threads launch 300 "w" kernels each (100 us apart) while the main thread
 *             turns CONCURRENT_KERNEL on and off 10 times and flushes;
 *             which kernels land in the collector depends on the race, so
 *             only "all_w 1" (every record it got is one of them) and the
 *             tail are printed; with CUPTI_CLIENT_WINDOWS set, each on
 *             window's CLOCK_MONOTONIC bounds ("window A B", taken before
 *             the enable and after the disable) and the records it got go
 *             to stderr
 *   burst     CONCURRENT_KERNEL on from the start: 4 threads launch 500
 *             "b" kernels each, back to back, while the main thread flushes
 *             every 100 us (each flush hands back a buffer holding a few
 *             records) until they are done; prints "all_b 1" (every
 *             record it got is one of them), "records N" and the tail.
 *             Traced, all this falls in the tracer's first milliseconds,
 *             while it makes its trace file. CUPTI_CLIENT_BURST="T K U":
 *             T threads of K kernels each, a flush every U us
 *   clock     its own CUPTI clock (CLOCK_MONOTONIC plus an hour) given
 *             to CUPTI, then CONCURRENT_KERNEL on for 50 "clocked" between
 *             cudaProfilerStart and Stop; prints "on_my_clock N": the
 *             records whose start and end lie on its clock between its
 *             reading before the first launch and after the last ended
 *   flushes   CONCURRENT_KERNEL on; 50 times one "f" kernel, synchronized,
 *             then cuptiActivityFlushAll(0) (faster than a tracer's writer
 *             drains the buffers each flush hands back)
 *   kineto    as the PyTorch profiler's collector (Kineto's
 *             CuptiActivityApi) on a schedule, twice: its clock given to
 *             CUPTI and its callbacks registered at each start; MEMCPY,
 *             MEMSET, CONCURRENT_KERNEL, EXTERNAL_CORRELATION, DRIVER and
 *             OVERHEAD on; 5 "warm_C" kernels, then its buffers cleared;
 *             10 "active_C" under CUSTOM0 and CUSTOM1 ids; kinds off; and
 *             its buffers collected. It holds the buffers CUPTI hands back
 *             until then, and flushes (cleared: 0, collected: FORCED) only
 *             while CUPTI holds one it lent ("nothing in flight, nothing
 *             to flush"); it keeps the kernels within its window on its
 *             clock: "C active_C kept", "C outside N", external ids, and
 *             driver records counted (overhead records: not printed, their
 *             number follows the flushes)
 * Built twice: linked to libcupti (cupti_client), and finding CUPTI with
 * dlopen and dlsym (cupti_client_dl, -DCUPTI_DLOPEN), as a program that
 * loads it late does. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cuda_profiler_api.h>
#include <cuda_runtime_api.h>
#include <cupti.h>
#include "fakecuda.h"

#ifdef CUPTI_DLOPEN
#define CU(name) p_##name
static CUptiResult (*p_cuptiActivityRegisterCallbacks)(CUpti_BuffersCallbackRequestFunc,
                                                        CUpti_BuffersCallbackCompleteFunc);
static CUptiResult (*p_cuptiActivityEnable)(CUpti_ActivityKind);
static CUptiResult (*p_cuptiActivityDisable)(CUpti_ActivityKind);
static CUptiResult (*p_cuptiActivityFlushAll)(uint32_t);
static CUptiResult (*p_cuptiActivityGetNextRecord)(uint8_t *, size_t, CUpti_Activity **);
static CUptiResult (*p_cuptiActivityGetNumDroppedRecords)(CUcontext, uint32_t, size_t *);
static CUptiResult (*p_cuptiActivityPushExternalCorrelationId)(CUpti_ExternalCorrelationKind, uint64_t);
static CUptiResult (*p_cuptiActivityPopExternalCorrelationId)(CUpti_ExternalCorrelationKind, uint64_t *);
static CUptiResult (*p_cuptiFinalize)(void);
static CUptiResult (*p_cuptiActivityRegisterTimestampCallback)(CUpti_TimestampCallbackFunc);
static CUptiResult (*p_cuptiSubscribe)(CUpti_SubscriberHandle *, CUpti_CallbackFunc, void *);
static CUptiResult (*p_cuptiActivityEnableRuntimeApi)(CUpti_CallbackId, uint8_t);

#define LOAD(name)                                                        \
    do {                                                                  \
        *(void **)&p_##name = dlsym(h, #name);                            \
        if (!p_##name) {                                                  \
            fprintf(stderr, "no %s\n", #name);                            \
            exit(2);                                                      \
        }                                                                 \
    } while (0)

static void load_cupti(void)
{
    void *h = dlopen("libcupti.so.13", RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        fprintf(stderr, "dlopen: %s\n", dlerror());
        exit(2);
    }
    LOAD(cuptiActivityRegisterCallbacks);
    LOAD(cuptiActivityEnable);
    LOAD(cuptiActivityDisable);
    LOAD(cuptiActivityFlushAll);
    LOAD(cuptiActivityGetNextRecord);
    LOAD(cuptiActivityGetNumDroppedRecords);
    LOAD(cuptiActivityPushExternalCorrelationId);
    LOAD(cuptiActivityPopExternalCorrelationId);
    LOAD(cuptiFinalize);
    LOAD(cuptiSubscribe);
    LOAD(cuptiActivityRegisterTimestampCallback);
    LOAD(cuptiActivityEnableRuntimeApi);
}
#else
#define CU(name) name
static void load_cupti(void) {}
#endif

#define CHECK(call)                                                       \
    do {                                                                  \
        CUptiResult r_ = (call);                                          \
        if (r_ != CUPTI_SUCCESS) {                                        \
            fprintf(stderr, "%s: %d\n", #call, (int)r_);                  \
            exit(3);                                                      \
        }                                                                 \
    } while (0)

#define BUF_SIZE (64 * 1024) /* small: many buffers, as records pile up */
#define MAX_BUFS 4096
#define MAX_LINES 100000

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static uint8_t *lent[MAX_BUFS];
static int nlent, foreign, bad_walks;
static char *lines[MAX_LINES];
static int nlines;
static size_t dropped;
static uint64_t kstart[MAX_LINES], kend[MAX_LINES];
static int nk;
/* kineto: buffers handed back are held until collected (ready), and how
 * many lent CUPTI still holds */
static int hold;
static int in_flight;
static struct {
    uint8_t *buf;
    size_t valid;
} ready[MAX_BUFS];
static int nready;

static void add_line(const char *s)
{
    if (nlines < MAX_LINES)
        lines[nlines++] = strdup(s);
}

static void CUPTIAPI requested(uint8_t **buf, size_t *size, size_t *max)
{
    uint8_t *b = aligned_alloc(8, BUF_SIZE);
    pthread_mutex_lock(&lock);
    if (nlent < MAX_BUFS)
        lent[nlent++] = b;
    in_flight++;
    pthread_mutex_unlock(&lock);
    *buf = b;
    *size = BUF_SIZE;
    *max = 0;
}

static void record_line(const CUpti_Activity *r)
{
    char s[512];
    switch (r->kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
        const CUpti_ActivityKernel10 *k = (const void *)r;
        if (nk < MAX_LINES) {
            kstart[nk] = k->start;
            kend[nk++] = k->end;
        }
        snprintf(s, sizeof(s), "%s %s %u", r->kind == CUPTI_ACTIVITY_KIND_KERNEL ? "kernel" : "concurrent_kernel",
                 k->name, k->correlationId);
        break;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY: {
        const CUpti_ActivityMemcpy6 *m = (const void *)r;
        snprintf(s, sizeof(s), "memcpy %llu %u", (unsigned long long)m->bytes, m->correlationId);
        break;
    }
    case CUPTI_ACTIVITY_KIND_MEMSET: {
        const CUpti_ActivityMemset4 *m = (const void *)r;
        snprintf(s, sizeof(s), "memset %llu %u", (unsigned long long)m->bytes, m->correlationId);
        break;
    }
    case CUPTI_ACTIVITY_KIND_DRIVER: {
        const CUpti_ActivityAPI *a = (const void *)r;
        snprintf(s, sizeof(s), "driver %u", a->correlationId);
        break;
    }
    case CUPTI_ACTIVITY_KIND_RUNTIME: {
        const CUpti_ActivityAPI *a = (const void *)r;
        snprintf(s, sizeof(s), "runtime %u", a->correlationId);
        break;
    }
    case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: {
        const CUpti_ActivityExternalCorrelation *x = (const void *)r;
        snprintf(s, sizeof(s), "external %d %llu %u", (int)x->externalKind, (unsigned long long)x->externalId,
                 x->correlationId);
        break;
    }
    default:
        snprintf(s, sizeof(s), "kind %d", (int)r->kind);
        break;
    }
    add_line(s);
}

static void CUPTIAPI completed(CUcontext ctx, uint32_t stream, uint8_t *buf, size_t size, size_t valid)
{
    (void)size;
    /* asked before taking our lock: CUPTI may call requested() under its
     * own lock, and requested() takes ours */
    size_t d = 0;
    int got = CU(cuptiActivityGetNumDroppedRecords)(ctx, stream, &d) == CUPTI_SUCCESS;
    pthread_mutex_lock(&lock);
    if (got)
        dropped += d;
    int mine = 0;
    for (int i = 0; i < nlent && !mine; i++)
        mine = lent[i] == buf;
    foreign += !mine;
    in_flight -= mine;
    if (hold && mine && nready < MAX_BUFS) {
        ready[nready].buf = buf;
        ready[nready++].valid = valid;
        pthread_mutex_unlock(&lock);
        return;
    }
    CUpti_Activity *r = NULL;
    uint8_t *end = buf;
    CUptiResult st;
    while ((st = CU(cuptiActivityGetNextRecord)(buf, valid, &r)) == CUPTI_SUCCESS) {
        record_line(r);
        end = (uint8_t *)r;
    }
    /* the walk ends on the limit, and its last record reaches validSize */
    bad_walks += st != CUPTI_ERROR_MAX_LIMIT_REACHED || (valid && end >= buf + valid);
    pthread_mutex_unlock(&lock);
    if (mine)
        free(buf);
}

static void launch(const char *name, int n)
{
    const void *k = fakecuda_runtime_kernel(name, 2000);
    dim3 g = {1, 1, 1}, b = {32, 1, 1};
    for (int i = 0; i < n; i++)
        cudaLaunchKernel(k, g, b, NULL, 0, NULL);
}

static void copies(int n, size_t bytes)
{
    static char host[1 << 16];
    static void *dev;
    if (!dev)
        cudaMalloc(&dev, sizeof(host));
    for (int i = 0; i < n; i++) {
        cudaMemcpy(dev, host, bytes, cudaMemcpyHostToDevice);
        cudaMemset(dev, 0, bytes / 2);
    }
}

static void *worker(void *arg)
{
    (void)arg;
    for (int i = 0; i < 300; i++) {
        launch("w", 1);
        struct timespec ts = {0, 100000};
        nanosleep(&ts, NULL);
    }
    cudaStreamSynchronize(NULL);
    return NULL;
}

static _Atomic int bursts_left;
static int burst_threads = 4, burst_kernels = 500, burst_flush_us = 100;

static void *burst_worker(void *arg)
{
    (void)arg;
    launch("b", burst_kernels);
    cudaStreamSynchronize(NULL);
    atomic_fetch_sub(&bursts_left, 1);
    return NULL;
}

static void start_collector(void)
{
    CHECK(CU(cuptiActivityRegisterCallbacks)(requested, completed));
}

static int cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* CLOCK_MONOTONIC plus an hour; with CUPTI_CLIENT_TICKS set, in ticks of
 * 0.4 ns (a 2.5 GHz TSC's, as the PyTorch profiler's clock counts). */
static uint64_t CUPTIAPI my_clock(void)
{
    static int ticks = -1;
    if (ticks < 0)
        ticks = getenv("CUPTI_CLIENT_TICKS") != NULL;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    uint64_t ns = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec + 3600ull * 1000000000ull;
    return ticks ? ns / 2 * 5 + ns % 2 * 5 / 2 : ns;
}

/* Kineto's CuptiActivityApi::activityBuffers and clearActivities: a flush
 * only while CUPTI holds a buffer it lent. */
static void kineto_flush(uint32_t flag)
{
    pthread_mutex_lock(&lock);
    int any = in_flight > 0;
    pthread_mutex_unlock(&lock);
    if (any)
        CHECK(CU(cuptiActivityFlushAll)(flag));
}

static void kineto_clear(void)
{
    kineto_flush(0);
    pthread_mutex_lock(&lock);
    for (int i = 0; i < nready; i++)
        free(ready[i].buf);
    nready = 0;
    pthread_mutex_unlock(&lock);
}

/* The records of the held buffers, kernels kept within [lo, hi]. */
static void kineto_collect(int cycle, uint64_t lo, uint64_t hi)
{
    kineto_flush(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    char s[512];
    int outside = 0, api = 0;
    pthread_mutex_lock(&lock);
    for (int i = 0; i < nready; i++) {
        CUpti_Activity *r = NULL;
        while (CU(cuptiActivityGetNextRecord)(ready[i].buf, ready[i].valid, &r) == CUPTI_SUCCESS) {
            if (r->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) {
                const CUpti_ActivityKernel10 *k = (const void *)r;
                if (k->start >= lo && k->end <= hi) {
                    snprintf(s, sizeof(s), "%d %s kept", cycle, k->name);
                    add_line(s);
                } else {
                    outside++;
                    if (getenv("CUPTI_CLIENT_DEBUG"))
                        fprintf(stderr, "outside %s: start - lo %lld, hi - end %lld\n", k->name,
                                (long long)(k->start - lo), (long long)(hi - k->end));
                }
            } else if (r->kind == CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION) {
                const CUpti_ActivityExternalCorrelation *x = (const void *)r;
                snprintf(s, sizeof(s), "%d external %d %llu", cycle, (int)x->externalKind,
                         (unsigned long long)x->externalId);
                add_line(s);
            } else if (r->kind == CUPTI_ACTIVITY_KIND_DRIVER || r->kind == CUPTI_ACTIVITY_KIND_RUNTIME) {
                api++;
            }
        }
        free(ready[i].buf);
    }
    nready = 0;
    snprintf(s, sizeof(s), "%d outside %d", cycle, outside);
    add_line(s);
    snprintf(s, sizeof(s), "%d api %d", cycle, api);
    add_line(s);
    pthread_mutex_unlock(&lock);
}

static void kineto(void)
{
    static const CUpti_ActivityKind kinds[] = {
        CUPTI_ACTIVITY_KIND_MEMCPY,      CUPTI_ACTIVITY_KIND_MEMSET, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
        CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION, CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_ACTIVITY_KIND_OVERHEAD};
    const size_t nkinds = sizeof(kinds) / sizeof(kinds[0]);
    char name[32];
    hold = 1;
    launch("before", 10);
    cudaDeviceSynchronize();
    for (int c = 0; c < 2; c++) {
        CHECK(CU(cuptiActivityRegisterTimestampCallback)(my_clock));
        start_collector();
        for (size_t i = 0; i < nkinds; i++)
            CHECK(CU(cuptiActivityEnable)(kinds[i]));
        snprintf(name, sizeof(name), "warm_%d", c);
        launch(name, 5);
        cudaDeviceSynchronize();
        kineto_clear();
        /* its window opens before the step's first launch and closes after
         * the synchronize (at stop): 50 us either side, far above the
         * simulated CUPTI's mapping of the GPU's times onto the clock */
        struct timespec gap = {0, 50000};
        uint64_t lo = my_clock();
        nanosleep(&gap, NULL);
        snprintf(name, sizeof(name), "active_%d", c);
        for (int i = 0; i < 10; i++) {
            uint64_t last;
            CHECK(CU(cuptiActivityPushExternalCorrelationId)(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, 100 * c + i));
            CHECK(CU(cuptiActivityPushExternalCorrelationId)(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM1, 1000 + i));
            launch(name, 1);
            CHECK(CU(cuptiActivityPopExternalCorrelationId)(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM1, &last));
            CHECK(CU(cuptiActivityPopExternalCorrelationId)(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, &last));
        }
        cudaDeviceSynchronize();
        nanosleep(&gap, NULL);
        uint64_t hi = my_clock();
        for (size_t i = 0; i < nkinds; i++)
            CHECK(CU(cuptiActivityDisable)(kinds[i]));
        kineto_collect(c, lo, hi);
        snprintf(name, sizeof(name), "between_%d", c);
        launch(name, 10);
        cudaDeviceSynchronize();
    }
}

static void CUPTIAPI on_callback(void *data, CUpti_CallbackDomain d, CUpti_CallbackId id, const void *info)
{
    (void)data;
    (void)d;
    (void)id;
    (void)info;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "phases";
    load_cupti();
    if (strcmp(mode, "phases") == 0) {
        launch("before", 100);
        cudaDeviceSynchronize();
        start_collector();
        /* the callback API's one subscriber: the tracer leaves it free */
        CUpti_SubscriberHandle sub;
        printf("subscribe %d\n", (int)CU(cuptiSubscribe)(&sub, (CUpti_CallbackFunc)on_callback, NULL));
        CHECK(CU(cuptiActivityEnable)(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
        launch("during", 100);
        cudaDeviceSynchronize();
        CHECK(CU(cuptiActivityDisable)(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
        launch("after", 100);
        cudaDeviceSynchronize();
    } else if (strcmp(mode, "kinds") == 0) {
        static const CUpti_ActivityKind kinds[] = {CUPTI_ACTIVITY_KIND_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,
                                                   CUPTI_ACTIVITY_KIND_MEMSET, CUPTI_ACTIVITY_KIND_RUNTIME};
        launch("before", 10);
        copies(10, 4096);
        cudaDeviceSynchronize();
        start_collector();
        for (size_t i = 0; i < 4; i++)
            CHECK(CU(cuptiActivityEnable)(kinds[i]));
        launch("during", 20);
        copies(5, 8192);
        cudaDeviceSynchronize();
        for (size_t i = 0; i < 4; i++)
            CHECK(CU(cuptiActivityDisable)(kinds[i]));
        launch("after", 10);
        copies(10, 2048);
        cudaDeviceSynchronize();
    } else if (strcmp(mode, "repeat") == 0) {
        start_collector();
        char name[32];
        for (int i = 0; i < 5; i++) {
            CHECK(CU(cuptiActivityEnable)(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
            snprintf(name, sizeof(name), "on_%d", i);
            launch(name, 10);
            CHECK(CU(cuptiActivityDisable)(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
            snprintf(name, sizeof(name), "off_%d", i);
            launch(name, 10);
        }
        cudaDeviceSynchronize();
    } else if (strcmp(mode, "finalize") == 0) {
        start_collector();
        CHECK(CU(cuptiActivityEnable)(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
        launch("k1", 50);
        cudaDeviceSynchronize();
        CHECK(CU(cuptiActivityFlushAll)(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED));
        CHECK(CU(cuptiFinalize)());
        launch("k2", 50);
        cudaDeviceSynchronize();
        start_collector();
        CHECK(CU(cuptiActivityEnable)(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
        launch("k3", 20);
        cudaDeviceSynchronize();
        CHECK(CU(cuptiActivityDisable)(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
        launch("k4", 30);
        cudaDeviceSynchronize();
    } else if (strcmp(mode, "ext") == 0) {
        start_collector();
        CHECK(CU(cuptiActivityEnable)(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION));
        CHECK(CU(cuptiActivityEnable)(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
        /* CUPTI writes external-correlation records beside API records
         * only: the launches' own */
        CHECK(CU(cuptiActivityEnableRuntimeApi)(CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, 1));
        for (int i = 0; i < 20; i++) {
            uint64_t last;
            CHECK(CU(cuptiActivityPushExternalCorrelationId)(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, 1000 + i));
            CHECK(CU(cuptiActivityPushExternalCorrelationId)(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM1, 5000 + i));
            launch("tagged", 1);
            CHECK(CU(cuptiActivityPopExternalCorrelationId)(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM1, &last));
            CHECK(CU(cuptiActivityPopExternalCorrelationId)(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, &last));
        }
        launch("bare", 10);
        cudaDeviceSynchronize();
    } else if (strcmp(mode, "range") == 0) {
        start_collector();
        CHECK(CU(cuptiActivityEnable)(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
        launch("pre", 50);
        cudaDeviceSynchronize();
        cudaProfilerStart();
        launch("in", 50);
        cudaDeviceSynchronize();
        cudaProfilerStop();
        launch("post", 50);
        cudaDeviceSynchronize();
        CHECK(CU(cuptiActivityDisable)(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
        launch("off", 50);
        cudaDeviceSynchronize();
    } else if (strcmp(mode, "threads") == 0) {
        start_collector();
        pthread_t t[4];
        for (int i = 0; i < 4; i++)
            pthread_create(&t[i], NULL, worker, NULL);
        for (int i = 0; i < 10; i++) {
            /* the kind is surely on from a_on to b_on, and perhaps from a to b */
            struct timespec a, a_on, b_on, b;
            clock_gettime(CLOCK_MONOTONIC, &a);
            CHECK(CU(cuptiActivityEnable)(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
            clock_gettime(CLOCK_MONOTONIC, &a_on);
            struct timespec ts = {0, 2000000};
            nanosleep(&ts, NULL);
            clock_gettime(CLOCK_MONOTONIC, &b_on);
            CHECK(CU(cuptiActivityDisable)(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
            clock_gettime(CLOCK_MONOTONIC, &b);
            if (getenv("CUPTI_CLIENT_WINDOWS"))
                fprintf(stderr, "window %lld %lld %lld %lld\n", a.tv_sec * 1000000000ll + a.tv_nsec,
                        a_on.tv_sec * 1000000000ll + a_on.tv_nsec, b_on.tv_sec * 1000000000ll + b_on.tv_nsec,
                        b.tv_sec * 1000000000ll + b.tv_nsec);
            CHECK(CU(cuptiActivityFlushAll)(0));
        }
        for (int i = 0; i < 4; i++)
            pthread_join(t[i], NULL);
        cudaDeviceSynchronize();
        CHECK(CU(cuptiActivityFlushAll)(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED));
        pthread_mutex_lock(&lock);
        int all_w = 1;
        for (int i = 0; i < nlines; i++)
            all_w &= strncmp(lines[i], "concurrent_kernel w ", 20) == 0;
        if (getenv("CUPTI_CLIENT_WINDOWS"))
            fprintf(stderr, "records %d\n", nlines);
        nlines = 0;
        pthread_mutex_unlock(&lock);
        printf("all_w %d\n", all_w);
    } else if (strcmp(mode, "burst") == 0) {
        start_collector();
        CHECK(CU(cuptiActivityEnable)(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
        const char *shape = getenv("CUPTI_CLIENT_BURST");
        if (shape)
            sscanf(shape, "%d %d %d", &burst_threads, &burst_kernels, &burst_flush_us);
        if (burst_threads < 1 || burst_threads > 64 || burst_flush_us < 1 || burst_flush_us > 999999)
            return 2;
        pthread_t t[64];
        atomic_store(&bursts_left, burst_threads);
        for (int i = 0; i < burst_threads; i++)
            pthread_create(&t[i], NULL, burst_worker, NULL);
        while (atomic_load(&bursts_left) > 0) {
            CHECK(CU(cuptiActivityFlushAll)(0));
            struct timespec ts = {0, burst_flush_us * 1000L};
            nanosleep(&ts, NULL);
        }
        for (int i = 0; i < burst_threads; i++)
            pthread_join(t[i], NULL);
        cudaDeviceSynchronize();
        CHECK(CU(cuptiActivityFlushAll)(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED));
        pthread_mutex_lock(&lock);
        int all_b = 1;
        for (int i = 0; i < nlines; i++)
            all_b &= strncmp(lines[i], "concurrent_kernel b ", 20) == 0;
        printf("all_b %d\nrecords %d\n", all_b, nlines);
        nlines = 0;
        pthread_mutex_unlock(&lock);
    } else if (strcmp(mode, "clock") == 0) {
        start_collector();
        CHECK(CU(cuptiActivityRegisterTimestampCallback)(my_clock));
        CHECK(CU(cuptiActivityEnable)(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
        cudaProfilerStart();
        uint64_t lo = my_clock();
        launch("clocked", 50);
        cudaDeviceSynchronize();
        uint64_t hi = my_clock();
        cudaProfilerStop();
        CHECK(CU(cuptiActivityFlushAll)(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED));
        int on = 0;
        pthread_mutex_lock(&lock);
        for (int i = 0; i < nk; i++)
            on += kstart[i] >= lo && kend[i] <= hi && kstart[i] <= kend[i];
        if (getenv("CUPTI_CLIENT_DEBUG"))
            for (int i = 0; i < nk; i++)
                fprintf(stderr, "%lld %lld\n", (long long)(kstart[i] - lo), (long long)(hi - kend[i]));
        pthread_mutex_unlock(&lock);
        printf("on_my_clock %d\n", on);
    } else if (strcmp(mode, "flushes") == 0) {
        start_collector();
        CHECK(CU(cuptiActivityEnable)(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
        for (int i = 0; i < 50; i++) {
            launch("f", 1);
            cudaDeviceSynchronize();
            CHECK(CU(cuptiActivityFlushAll)(0));
        }
        CHECK(CU(cuptiActivityDisable)(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
    } else if (strcmp(mode, "kineto") == 0) {
        kineto();
    } else {
        fprintf(stderr, "unknown scenario %s\n", mode);
        return 2;
    }
    CHECK(CU(cuptiActivityFlushAll)(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED));
    pthread_mutex_lock(&lock);
    qsort(lines, (size_t)nlines, sizeof(lines[0]), cmp);
    for (int i = 0; i < nlines; i++)
        printf("%s\n", lines[i]);
    if (strcmp(mode, "threads") != 0 && strcmp(mode, "burst") != 0)
        printf("records %d\n", nlines);
    printf("foreign_buffers %d\nbad_walks %d\ndropped %zu\n", foreign, bad_walks, dropped);
    pthread_mutex_unlock(&lock);
    return 0;
}
