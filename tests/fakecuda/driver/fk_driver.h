/* fk_driver.h: internals of the simulated CUDA driver. */
#ifndef FK_DRIVER_H
#define FK_DRIVER_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <cuda.h>
#include "fakecuda.h"

#define FK_API __attribute__((visibility("default")))
#define FK_MAX_DEVICES 8

/* Every handle the driver gives out starts with a magic word, so a bad
 * handle is an error code, not a crash. */
struct CUgraph_st;

enum { FK_MAGIC_GRAPH = 0x47524131, FK_MAGIC_GEXEC = 0x47455831, FK_MAGIC_GNODE = 0x474e4f31 };
enum { FK_MAGIC_CTX = 0x43545831, FK_MAGIC_STREAM = 0x53545231, FK_MAGIC_EVENT = 0x45564e31,
       FK_MAGIC_FUNC = 0x46554e31, FK_MAGIC_MOD = 0x4d4f4431 };

/* Each device has one context, its primary one. */
struct CUctx_st {
    uint32_t magic;
    uint32_t id;
    int device;
    unsigned flags;                /* cuDevicePrimaryCtxSetFlags: CU_CTX_SCHED_*, CU_CTX_MAP_HOST, ... */
    int flags_set;                 /* set explicitly (cudaSetDeviceFlags) */
    int retained;                  /* primary context retains not yet released */
    int created;                   /* retained once at least (its creation's cost paid) */
    uint8_t peer[FK_MAX_DEVICES];  /* peer access enabled to that device's memory */
};

/* A set of graph nodes a stream's next captured work depends on. */
struct fk_capdeps {
    struct CUgraphNode_st **v;
    size_t n, room;
};

struct CUstream_st {
    uint32_t magic;
    uint32_t id;
    unsigned flags;      /* CU_STREAM_NON_BLOCKING or 0 */
    int device;
    uint64_t tail;       /* when the last work submitted here ends */
    int legacy;
    struct CUgraph_st *capture; /* stream capture in progress: work becomes graph nodes */
    struct fk_capdeps cap_deps; /* capture: the nodes the next captured work depends on (fk_capture.c) */
    _Atomic int pending_host;   /* host functions submitted here and not yet returned */
    _Atomic uint64_t last_effect; /* ticket of the last memory effect of work submitted here */
    uint64_t *queue;            /* end times of the last fk_cfg.queue_depth pieces of work, a ring */
    unsigned queue_pos;
    int priority;
};

/* Host functions not yet returned, over all streams. */
extern _Atomic int fk_pending_host;
/* Syncs wait for host functions too, as the real driver's do. */
void fk_wait_host_functions(struct CUstream_st *s);

/* One piece of GPU work, as a call submits it or a graph node holds it. */
struct fk_node {
    int kind;                   /* FAKECUDA_ACT_KERNEL, _MEMCPY, _MEMSET */
    struct CUfunc_st *f;
    unsigned grid[3], block[3], shm;
    void *dst;
    const void *src;
    size_t bytes;
    /* copies of more than one row: `height` rows of `width` bytes a slice,
     * `depth` slices, rows `spitch`/`dpitch` apart, slices `sheight`/`dheight`
     * rows apart. width 0: one run of `bytes`. */
    size_t width, height, depth, spitch, dpitch, sheight, dheight;
    int copy_kind, src_kind, dst_kind;
    unsigned value;
    size_t esz, n, pitch, rows;
    int blocking;               /* the call waits for it: its bytes move before it starts */
    CUhostFn fn;                /* FK_NODE_HOST */
    void *data;
};

/* Memory effects (fk_effects.c): the bytes a copy moves and a memset
 * writes are moved by a driver thread, in the order they were posted, so a
 * call the real driver returns from at once does not spend the host's time
 * on them. Returns the effect's ticket. */
uint64_t fk_effect_post(const struct fk_node *n);
/* Waits until the effect with this ticket, and every earlier one, is made. */
void fk_effect_wait(uint64_t ticket);
void fk_effects_start(void);
/* The ticket of the last effect posted so far. */
uint64_t fk_effect_last(void);
int fk_effect_done(uint64_t ticket);

/* Kinds of graph node that are no GPU work, beside the activity kinds. */
enum { FK_NODE_HOST = 16, FK_NODE_EMPTY = 17, FK_NODE_MEM_ALLOC = 18, FK_NODE_MEM_FREE = 19 };

/* A node of a graph built by capture or node by node. */
struct CUgraphNode_st {
    uint32_t magic;
    uint64_t id;                    /* CUPTI's graphNodeId: unique in the process */
    size_t index;                   /* in its graph's nodes */
    struct CUgraph_st *graph;
    struct fk_node work;
    struct CUgraphNode_st **deps;   /* nodes of the same graph added before it */
    size_t ndeps;
};

struct CUgraph_st {
    uint32_t magic;
    uint32_t id;                    /* CUPTI's graphId */
    struct CUgraphNode_st **nodes;  /* in the order added: each after its dependencies */
    size_t count, cap;
    int capturing;                  /* a capture into it is under way */
    struct CUstream_st *origin;     /* capture: the stream it began on */
    struct CUstream_st **joined;    /* capture: the other streams joined to it through events */
    size_t njoined;
};

/* An instantiated graph: a copy of its graph's nodes, so that later changes
 * to the graph do not reach it (cuGraphExecUpdate does). */
struct fk_exec_node {
    struct fk_node work;
    uint64_t id;
    size_t *deps;                   /* indexes of earlier exec nodes */
    size_t ndeps;
};

struct CUgraphExec_st {
    uint32_t magic;
    uint32_t graph_id;
    struct fk_exec_node *nodes;
    size_t count;
};

/* A copy node from a 2D/3D copy's parameters (fk_memory.c). */
CUresult fk_node_from_3d(const CUDA_MEMCPY3D *p, struct fk_node *node);

/* Graph construction (fk_graph_build.c). */
struct CUgraph_st *fk_graph_new(void);
/* Adds a node doing `w` after `deps`; NULL when out of memory. fk_lock held. */
struct CUgraphNode_st *fk_graph_add_locked(struct CUgraph_st *g, const struct fk_node *w,
                                          struct CUgraphNode_st *const *deps, size_t ndeps);
int fk_graph_ok(CUgraph g);
/* Adds a node doing `w` to g after deps (distinct nodes of g), as cuGraphAdd*Node do. */
CUresult fk_add(CUgraphNode *out, CUgraph g, const CUgraphNode *deps, size_t ndeps, const struct fk_node *w);
/* A memset node's work from its parameters (fk_graph_build.c). */
CUresult fk_memset_work(const CUDA_MEMSET_NODE_PARAMS *p, struct fk_node *w);
/* A memory pool handle the driver gave out (fk_mempool.c). */
int fk_pool_valid(CUmemoryPool pool);
int fk_graph_node_ok(CUgraphNode n);
/* Fills e with a copy of g's nodes. */
CUresult fk_exec_build(struct CUgraphExec_st *e, const struct CUgraph_st *g);
/* Runs fn(data) (or cb(handle, status, data)) on a thread of its own once
 * the GPU reaches `at`, counted as pending on s until it returns (fk_api.c). */
CUresult fk_host_call(struct CUstream_st *s, uint64_t at, CUhostFn fn, CUstreamCallback cb, CUstream handle,
                      void *data);
/* Emits the activity record of work that runs [start, end) on s. */
void fk_emit_work(struct CUstream_st *s, const struct fk_node *n, uint32_t corr, uint64_t start, uint64_t end,
                  uint32_t graph_id, uint64_t node_id);

/* Stream capture (fk_capture.c). Appends a node to the graph s is
 * capturing, after the nodes s depends on. Returns 1 if s is capturing. */
int fk_capture(struct CUstream_st *s, const struct fk_node *node);
/* An event recorded on a capturing stream keeps the stream's dependencies
 * and records nothing; a stream waiting on such an event joins the capture
 * (or adds them to its own). Each returns 1 when it handled the call. */
int fk_capture_event_record(struct CUevent_st *e, struct CUstream_st *s);
int fk_capture_wait_event(struct CUstream_st *s, struct CUevent_st *e);
/* Runs one piece of work on s now: gives it times on the timeline, posts
 * its memory effect (its ticket to *ticket if not NULL) and emits its
 * activity record. Returns when it ends on the GPU. */
uint64_t fk_run_node(struct CUstream_st *s, const struct fk_node *n, uint32_t corr, uint64_t *ticket);
/* The node's GPU duration, from the settings. */
uint64_t fk_node_ns(const struct fk_node *n);

struct CUevent_st {
    uint32_t magic;
    unsigned flags;      /* CU_EVENT_DISABLE_TIMING, ... as created */
    int recorded;
    uint64_t time;       /* GPU time the event completes */
    uint64_t effect;     /* memory effects it waits for */
    struct CUgraph_st *cap_graph; /* recorded during a capture: its graph, and */
    struct fk_capdeps cap_deps;   /* the nodes a stream waiting on it then depends on */
};

struct CUfunc_st {
    uint32_t magic;
    char *name;
    uint64_t dur_ns;     /* 0: from the duration table */
};

/* struct CUmod_st, struct CUlinkState_st: fk_module.c */

/* Global simulator state (fk_state.c). */
extern pthread_mutex_t fk_lock;
extern int fk_initialized;
extern struct CUctx_st fk_ctx[FK_MAX_DEVICES];

/* The simulated device's per-multiprocessor limits (an H100 SXM's). */
enum { FK_SM_THREADS = 2048, FK_SM_BLOCKS = 32, FK_SM_REGS = 65536, FK_SM_SHARED = 233472,
       FK_SHARED_RESERVED = 1024, FK_SM_COUNT = 132, FK_KERNEL_REGS = 32 };

struct fk_settings {
    uint64_t kernel_ns;
    uint64_t launch_ns;
    uint64_t launch_latency_ns; /* submission to the earliest start of its work on the GPU */
    unsigned queue_depth;       /* pending pieces of work per stream before a submission blocks; 0: no limit */
    uint64_t activity_lag_us;   /* FAKECUDA_ACTIVITY_LAG_US: the driver's thread holds each batch of records this long,
                                 * as a loaded machine might deschedule it; a flush meanwhile waits for it */
    double pinned_bw, pageable_bw, dtod_bw; /* bytes per ns */
    uint64_t copy_latency_ns;
    int devices;
    uint64_t jit_ns;            /* FAKECUDA_JIT_NS: host time each PTX image's compile costs */
    uint64_t ctx_create_ns;     /* FAKECUDA_CTX_CREATE_NS: host time a primary context's first retain costs */
};
extern struct fk_settings fk_cfg;

void fk_init_once(void);
CUresult fk_check_ctx(void);
CUcontext fk_current_ctx(void);
/* The device of the current context (0 without one). */
int fk_current_device(void);
void fk_set_current_ctx(CUcontext c);
/* Returns the error from an API function when there is no usable context. */
#define CHECK_CTX()                           \
    do {                                      \
        CUresult r_ = fk_check_ctx();         \
        if (r_ != CUDA_SUCCESS)               \
            return r_;                        \
    } while (0)
int fk_is_forked_child(void);
uint64_t fk_kernel_duration(const struct CUfunc_st *f);
struct CUfunc_st *fk_function(const char *name);
/* The error the kernel fails with on the GPU (FAKECUDA_KERNEL_FAIL), 0 if none. */
int fk_function_fault(const struct CUfunc_st *f);

/* Collectives across the ranks of a simulated job (fk_collective.c): is f
 * one (named as NCCL's, in a job); launch it (returns its arrival, its end
 * is settled later); settle the pending one, waiting for the peers. */
int fk_coll_is(const struct CUfunc_st *f);
uint64_t fk_coll_launch(struct CUstream_st *s, const struct fk_node *n, uint32_t corr);
void fk_coll_settle(void);

/* Device-side errors (fk_fault.c). */
int fk_kernel_fault(const char *name, const char *plain);
void fk_parse_kernel_fail(void (*warn)(const char *var, const char *val, const char *def));
/* The device fails at GPU time t with code (the earliest failure stands). */
void fk_fault_at(int device, uint64_t t, int code);
/* The device's error if it has failed by time t, else 0. */
int fk_fault_by(int device, uint64_t t);
void fk_fault_clear(int device);
/* Waits until the GPU reaches t, or fails before: the error, or success. */
CUresult fk_wait_gpu(int device, uint64_t t);

/* Memory registry. */
enum fk_mem { FK_MEM_PAGEABLE = FAKECUDA_MEM_PAGEABLE, FK_MEM_PINNED = FAKECUDA_MEM_PINNED,
              FK_MEM_DEVICE = FAKECUDA_MEM_DEVICE, FK_MEM_MANAGED = FAKECUDA_MEM_MANAGED };
void fk_mem_add(uintptr_t base, size_t len, int kind, int owned);
/* The device an allocation of device memory is on; -1 for other memory. */
int fk_mem_device(uintptr_t p);
/* Allocations of this size and more are mapped (mmap), smaller ones calloc'd. */
#define FK_MAP_BYTES (64u << 10)
int fk_mem_remove(uintptr_t base, int *kind, size_t *len);
int fk_mem_kind(uintptr_t p);
/* The device (or managed) allocation holding p: 1 and its start and length, else 0. */
int fk_mem_range(uintptr_t p, uintptr_t *base, size_t *len);
/* Bytes of device and managed memory allocated on the device now. */
uint64_t fk_mem_device_used(int device);
/* Memory the device has, and what its context keeps for itself. */
#define FK_DEVICE_BYTES (80ull << 30)
#define FK_CONTEXT_BYTES (1ull << 30)
/* For a pointer into a registered allocation: 1 when [p, p + n) lies
 * inside it, else 0. A pointer outside every allocation (pageable host
 * memory) is not the driver's to check: 1. */
int fk_mem_fits(uintptr_t p, size_t n);

/* Timeline (fk_timeline.c). All times on fakecuda_now_ns. */
struct CUstream_st *fk_stream(CUstream s, int per_thread);
int fk_stream_valid(CUstream s);
uint64_t fk_submit(struct CUstream_st *s, uint64_t dur, uint64_t *start);
/* A kernel ran on `device` from lo to hi (fk_busy.c: the simulated NVML's utilization). */
void fk_busy_add(int device, uint64_t lo, uint64_t hi);
/* A graph launch on s: the earliest its nodes may start (the stream's queue
 * admitted it, its earlier work ended), then, once they are placed, the end
 * of the last, which becomes the stream's. */
uint64_t fk_graph_open(struct CUstream_st *s);
void fk_graph_close(struct CUstream_st *s, uint64_t end);
uint64_t fk_stream_done_time(struct CUstream_st *s);
/* The ticket of the last memory effect a sync of s must see made. */
uint64_t fk_stream_effect(struct CUstream_st *s);
/* When all work on the device ends. */
uint64_t fk_all_done_time(int device);
void fk_wait_until(uint64_t t);
struct CUstream_st *fk_stream_create(unsigned flags, int priority);
/* A stream priority within the device's range (fk_device.c). */
int fk_clamp_priority(int p);
void fk_stream_destroy(struct CUstream_st *s);
void fk_event_record(struct CUevent_st *e, struct CUstream_st *s);
void fk_stream_wait_event(struct CUstream_st *s, struct CUevent_st *e);

/* Emits the record of a sync the host waited in from t0 to now (fk_api.c);
 * type as CUPTI's synchronization types. */
void fk_emit_sync(uint32_t corr, int type, uint32_t stream_id, uint64_t t0);

/* Activity (fk_activity.c). */
uint32_t fk_api_enter(const char *api);
void fk_activity_emit(const struct fakecuda_activity *a);

/* MD2 (fk_md2.c), for the runtime's integrity check (fk_export.c). */
struct fk_md2 {
    uint8_t x[48], c[16], l, n;
};
void fk_md2_init(struct fk_md2 *m);
void fk_md2_update(struct fk_md2 *m, const void *data, size_t n, uint8_t mask);
void fk_md2_final(struct fk_md2 *m, uint8_t out[16]);

#endif
