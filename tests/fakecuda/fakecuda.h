/* fakecuda.h: control interface of the simulated GPU, for tests.
 *
 * Programs run on the simulated GPU through NVIDIA's own API (cuda.h,
 * cuda_runtime.h); this header only adds what a test needs to set ground
 * truth from inside a C program. Everything here can also be set from the
 * environment (see tests/fakecuda/README.md).
 */
#ifndef FAKECUDA_H
#define FAKECUDA_H

#include <stdint.h>
#include <cuda.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- driver side: libcuda.so.1 ---- */

/* The timeline's clock: CLOCK_MONOTONIC in nanoseconds. */
uint64_t fakecuda_now_ns(void);

/* How long kernels ran on `device` between `from` and `to` (the union of
 * their intervals, on the fakecuda_now_ns clock; the last few seconds
 * only): what the simulated NVML reports as utilization. */
uint64_t fakecuda_busy_ns(int device, uint64_t from, uint64_t to);

/* Device d sits on PCI bus FAKECUDA_FIRST_BUS + d (cuDeviceGetPCIBusId,
 * and NVML's handles by bus id). */
#define FAKECUDA_FIRST_BUS 0x18

/* Sets the GPU duration of every kernel whose function identifier is `name`
 * (the mangled name, or the plain name before its parameter list). */
void fakecuda_set_kernel_ns(const char *name, uint64_t ns);

/* Makes every kernel whose identifier is `name` fail on the GPU with `code`
 * (CUDA_ERROR_ASSERT, CUDA_ERROR_LAUNCH_FAILED, CUDA_ERROR_ILLEGAL_ADDRESS;
 * 0: CUDA_ERROR_ASSERT), as FAKECUDA_KERNEL_FAIL does. */
void fakecuda_set_kernel_fail(const char *name, int code);

/* A kernel named `name` in the current context, ready for cuLaunchKernel,
 * running `ns` nanoseconds on the GPU (0: the default duration). */
CUfunction fakecuda_driver_kernel(const char *name, uint64_t ns);

/* Launches f on s through an entry point that is not part of CUDA's API,
 * as a new or private driver function would: GPU work no tracer wraps. */
CUresult fakecuda_unlisted_launch(CUfunction f, CUstream s);

/* ---- runtime side: libcudart.so.13 ---- */

/* A host-side kernel handle for cudaLaunchKernel / cudaLaunchKernelExC,
 * as if a .cu file had registered a kernel named `name`. */
const void *fakecuda_runtime_kernel(const char *name, uint64_t ns);

/* ---- for the simulated CUPTI (internal, driver side) ---- */

enum fakecuda_activity_kind {
    FAKECUDA_ACT_KERNEL = 1,
    FAKECUDA_ACT_MEMCPY = 2,
    FAKECUDA_ACT_MEMSET = 3,
    FAKECUDA_ACT_SYNC = 4,
};

/* Memory kinds, numbered as CUpti_ActivityMemoryKind. */
enum fakecuda_mem_kind {
    FAKECUDA_MEM_UNKNOWN = 0,
    FAKECUDA_MEM_PAGEABLE = 1,
    FAKECUDA_MEM_PINNED = 2,
    FAKECUDA_MEM_DEVICE = 3,
    FAKECUDA_MEM_MANAGED = 5,
};

struct fakecuda_activity {
    int kind;                  /* enum fakecuda_activity_kind */
    uint32_t correlation_id;   /* of the driver API call that submitted it */
    uint32_t device;
    uint32_t context_id;
    uint32_t stream_id;        /* stable small id per stream; legacy default stream is 7 */
    uint64_t start_ns, end_ns; /* on the fakecuda_now_ns clock */
    /* kernel */
    const char *name;          /* mangled identifier; valid for the process lifetime */
    uint32_t grid[3], block[3];
    uint32_t shared_mem;
    /* memcpy / memset */
    uint64_t bytes;
    int copy_kind;             /* CUpti_ActivityMemcpyKind numbering: 1 HtoD, 2 DtoH, 8 DtoD, 10 PtoP, 11 HtoH */
    int src_kind, dst_kind;    /* enum fakecuda_mem_kind */
    int memset_value;
    /* sync */
    int sync_type;             /* CUpti_ActivitySynchronizationType numbering */
    /* work a graph launch ran: the graph's and the node's ids, else 0 */
    uint32_t graph_id;
    uint64_t graph_node_id;
};

/* Called on the GPU's schedule (possibly on another thread, any order across
 * streams) once each piece of work has been given its times. */
typedef void (*fakecuda_activity_cb)(const struct fakecuda_activity *a, void *arg);
void fakecuda_activity_subscribe(fakecuda_activity_cb cb, void *arg);

/* Called on the calling thread at the start of every driver API call that
 * submits or waits on GPU work, with the correlation id its records carry. */
typedef void (*fakecuda_api_cb)(uint32_t correlation_id, const char *api_name, void *arg);
void fakecuda_api_subscribe(fakecuda_api_cb cb, void *arg);
/* The simulated runtime's work-making calls, entered (1) and left (0): the
 * call takes a correlation id (api_name: its CUPTI runtime callback name,
 * "cuda..."), which the driver calls inside it share. */
void fakecuda_runtime_api(const char *api_name, int enter);

/* CUPTI's ids of a graph node and a graph (what cuptiGetGraphNodeId and
 * cuptiGetGraphId answer). 0, or -1 for a bad handle. */
int fakecuda_graph_node_id(CUgraphNode n, uint64_t *id);
int fakecuda_graph_id(CUgraph g, uint32_t *id);

#ifdef __cplusplus
}
#endif
#endif
