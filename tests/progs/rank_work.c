/* rank_work: one rank of a data-parallel training job on the simulated GPU,
 * with planted answers for tests/test_ranks.py and test_simulator.py.
 *   rank_work STEPS STALL_RANK STALL_STEP STALL_MS CRASH_RANK CRASH_STEP
 * (a rank of -1: none). The rank is RANK, the job FAKECUDA_JOB of
 * FAKECUDA_WORLD_SIZE ranks (tests/fakecuda/README.md, Collectives).
 * After set-up (NVTX range "init": an allocation and a 1 MiB copy), ranks
 * meet on the host (files ready.R in RANK_WORK_DIR, as NCCL's
 * bootstrap meets over sockets), then each of STEPS steps is one NVTX
 * range "step":
 *   load_batch(): 2 ms on the host; on STALL_RANK at STALL_STEP, STALL_MS
 *     more (the planted stall); then a 1 MiB blocking copy host-to-device
 *     from pageable memory
 *   forward(): launches fwd_kernel (FAKECUDA_KERNEL_NS, 3 ms in the tests)
 *   all_reduce(): launches ncclDevKernel_AllReduce_Sum_f32_RING_LL (its
 *     data time from FAKECUDA_KERNEL_NS), which ends when every rank has
 *     launched its own
 *   cudaStreamSynchronize(0) (the optimizer reads the reduced gradients)
 * CRASH_RANK aborts at the start of CRASH_STEP. RANK_WORK_SLOW=R:NS makes
 * rank R's fwd_kernel run NS ns (a slower GPU). RANK_WORK_EXTRA=R:S makes
 * rank R launch one more collective in step S, after its all-reduce:
 * ncclDevKernel_Broadcast_RING_LL, which the tests run on a communicator
 * of that rank alone (FAKECUDA_COLLECTIVE_SOLO), so the ranks' collectives
 * differ in that step only. RANK_WORK_COMM_THREAD=1 launches the
 * all-reduce from a thread of its own each step (as PyTorch's autograd
 * threads launch DDP's), outside the NVTX ranges, which only the main
 * thread marks. */
#include <dirent.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cuda_runtime_api.h>
#include <nvtx3/nvToolsExt.h>
#include "fakecuda.h"

#define MB (1 << 20)

static const void *fwd, *allreduce, *extra;
static void *dev;
static char *host;
static dim3 g1 = {1, 1, 1}, b1 = {32, 1, 1};

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

__attribute__((noinline)) static void load_batch(int stall_ms)
{
    sleep_ms(2 + stall_ms);
    cudaMemcpy(dev, host, MB, cudaMemcpyHostToDevice);
}

__attribute__((noinline)) static void forward(void) { cudaLaunchKernel(fwd, g1, b1, NULL, 0, NULL); }

__attribute__((noinline)) static void all_reduce(void) { cudaLaunchKernel(allreduce, g1, b1, NULL, 0, NULL); }

static void *comm_thread(void *arg)
{
    (void)arg;
    all_reduce();
    return NULL;
}

/* The all-reduce, from this thread or (RANK_WORK_COMM_THREAD) one of its own. */
static void launch_all_reduce(int own_thread)
{
    pthread_t t;
    if (own_thread && pthread_create(&t, NULL, comm_thread, NULL) == 0) {
        pthread_join(t, NULL);
        return;
    }
    all_reduce();
}

__attribute__((noinline)) static void broadcast(void) { cudaLaunchKernel(extra, g1, b1, NULL, 0, NULL); }

/* Every rank's file in dir, or 10 s. */
static void meet(const char *dir, int rank, int world)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/ready.%d", dir, rank);
    FILE *f = fopen(path, "w");
    if (f)
        fclose(f);
    for (int tries = 0; tries < 20000; tries++) {
        int n = 0;
        DIR *d = opendir(dir);
        struct dirent *e;
        while (d && (e = readdir(d)))
            n += strncmp(e->d_name, "ready.", 6) == 0;
        if (d)
            closedir(d);
        if (n >= world)
            return;
        struct timespec ts = {0, 500000};
        nanosleep(&ts, NULL);
    }
}

int main(int argc, char **argv)
{
    if (argc < 7) {
        fprintf(stderr, "usage: rank_work STEPS STALL_RANK STALL_STEP STALL_MS CRASH_RANK CRASH_STEP\n");
        return 2;
    }
    int steps = atoi(argv[1]), stall_rank = atoi(argv[2]), stall_step = atoi(argv[3]), stall_ms = atoi(argv[4]);
    int crash_rank = atoi(argv[5]), crash_step = atoi(argv[6]);
    const char *r = getenv("RANK"), *w = getenv("FAKECUDA_WORLD_SIZE"), *dir = getenv("RANK_WORK_DIR");
    int rank = r ? atoi(r) : 0, world = w ? atoi(w) : 1;
    /* RANK_WORK_SLOW=R:NS: rank R's fwd_kernel runs NS (a slower GPU) */
    const char *slow = getenv("RANK_WORK_SLOW");
    long long fwd_ns = 0;
    if (slow && atoi(slow) == rank && strchr(slow, ':'))
        fwd_ns = atoll(strchr(slow, ':') + 1);
    /* RANK_WORK_EXTRA=R:S: rank R launches one more collective in step S */
    const char *ex = getenv("RANK_WORK_EXTRA");
    int extra_step = ex && atoi(ex) == rank && strchr(ex, ':') ? atoi(strchr(ex, ':') + 1) : -1;
    const char *ct = getenv("RANK_WORK_COMM_THREAD");
    int comm_own_thread = ct && atoi(ct) == 1;
    fwd = fakecuda_runtime_kernel("fwd_kernel", (uint64_t)fwd_ns);
    extra = fakecuda_runtime_kernel("ncclDevKernel_Broadcast_RING_LL", 0);
    allreduce = fakecuda_runtime_kernel("ncclDevKernel_AllReduce_Sum_f32_RING_LL", 0);
    /* set-up, in NVTX range "init": the first NVTX call and the first copy
     * load what they need (as a framework's warm-up step would) */
    nvtxRangePushA("init");
    cudaMalloc(&dev, MB);
    host = calloc(1, MB);
    cudaMemcpy(dev, host, MB, cudaMemcpyHostToDevice);
    cudaDeviceSynchronize();
    nvtxRangePop();
    if (dir)
        meet(dir, rank, world);
    for (int i = 0; i < steps; i++) {
        if (rank == crash_rank && i == crash_step)
            abort();
        nvtxRangePushA("step");
        load_batch(rank == stall_rank && i == stall_step ? stall_ms : 0);
        forward();
        launch_all_reduce(comm_own_thread);
        if (i == extra_step)
            broadcast();
        cudaStreamSynchronize(0);
        nvtxRangePop();
    }
    cudaDeviceSynchronize();
    cudaFree(dev);
    free(host);
    printf("rank_work: rank %d done\n", rank);
    return 0;
}
