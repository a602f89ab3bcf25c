/* gt_event.h: the fixed-size record one intercepted call leaves in its
 * thread's ring. Raw values only; names and stacks are ids resolved later. */
#ifndef GT_EVENT_H
#define GT_EVENT_H

#include <stdint.h>

enum gt_category {
    GT_CAT_NONE = 0,   /* observed for bookkeeping, never recorded */
    GT_CAT_LAUNCH,
    GT_CAT_MEMCPY,
    GT_CAT_MEMSET,
    GT_CAT_SYNC,
    GT_CAT_ALLOC,
    GT_CAT_FREE,
    GT_CAT_STREAM,
    GT_CAT_EVENT,
    GT_CAT_OTHER,
    GT_CAT_GRAPH,      /* a CUDA Graph launch */
    GT_CAT_GRAPH_BUILD, /* building a graph: create, add a node, clone, instantiate, update */
    GT_CAT_QUERY,      /* an event or stream poll: written as sync (kinds *_query), runs of not-ready polls folded */
    GT_CAT_MODULE,     /* loading, linking and JIT-compiling modules; getting their functions and globals */
    GT_CAT_COUNT
};

/* What a module-loading call was given (module_args.kind). */
enum gt_module_kind { GT_MOD_NONE, GT_MOD_PTX, GT_MOD_CUBIN, GT_MOD_FATBIN, GT_MOD_OTHER, GT_MOD_FILE };

enum gt_copy_kind { GT_COPY_HTOD, GT_COPY_DTOH, GT_COPY_DTOD, GT_COPY_HTOH, GT_COPY_PTOP };

/* GT_HM_MAPPED: page-locked host memory mapped into the device's address
 * space (zero-copy: kernels may read it over the bus). */
enum gt_host_mem { GT_HM_PAGEABLE, GT_HM_PINNED, GT_HM_MANAGED, GT_HM_NONE, GT_HM_UNKNOWN, GT_HM_MAPPED };

enum gt_sync_kind {
    GT_SYNC_DEVICE, GT_SYNC_CONTEXT, GT_SYNC_STREAM, GT_SYNC_EVENT, GT_SYNC_STREAM_WAIT_EVENT,
    GT_SYNC_EVENT_QUERY, GT_SYNC_STREAM_QUERY /* cudaEventQuery, cudaStreamQuery: polls (schema version 8) */
};

/* GT_AK_MAPPED: host memory allocated or registered with the mapped flag. */
enum gt_alloc_kind { GT_AK_DEVICE, GT_AK_PINNED, GT_AK_MANAGED, GT_AK_REGISTERED, GT_AK_ASYNC, GT_AK_MAPPED };

/* The api of an NVTX event (never a hook table index). */
#define GT_API_NVTX 0xFFFFFF00u
/* The api of a graph node record that is not a call of its own: the node a
 * captured call became, or a node of a clone (u.gnode; its tid, time and
 * stacks are the call's that made it). */
#define GT_API_GRAPH_NODE 0xFFFFFF01u

/* Kinds of CUDA Graph node (graph_nodes.kind). */
enum gt_gnode_kind {
    GT_GN_KERNEL, GT_GN_MEMCPY, GT_GN_MEMSET, GT_GN_HOST, GT_GN_EMPTY, GT_GN_OTHER,
    GT_GN_MEM_ALLOC, GT_GN_MEM_FREE, /* graph memory nodes (schema version 8) */
    GT_GN_CLONE = 254, /* a clone's node: its kind and site are its original's (u.gnode.orig) */
    GT_GN_NONE = 255   /* a graph-building call that made no node of its own */
};

/* The api of a host sample (preload/sampler/): start_ns is its time. */
#define GT_API_SAMPLE 0xFFFFFF02u

/* A sample's state (samples.state). */
enum gt_sample_state { GT_SAMPLE_RUNNING, GT_SAMPLE_SYSCALL, GT_SAMPLE_WAITING };
/* A sample's syscall GT_SYSCALL_NO_FDS + NR: select, pselect6, poll or
 * ppoll (NR) waiting on no descriptors, a sleep (syscall_names says so). */
#define GT_SYSCALL_NO_FDS 100000

/* Stream handle values with a meaning of their own (cuda.h). */
#define GT_STREAM_LEGACY     1ULL
#define GT_STREAM_PER_THREAD 2ULL

struct gt_event {
    uint64_t start_ns, end_ns;
    uint64_t stream;
    uint64_t corr;       /* our external correlation id for CUPTI; 0: none */
    uint32_t api;        /* index into the hook table */
    int32_t result;
    uint32_t stack_id;   /* 0: none */
    uint32_t tid;
    uint8_t has_stream;
    uint8_t captured;    /* made during stream capture: became a graph node, ran nothing */
    uint8_t pad[2];
    uint32_t pystack_id; /* the Python stack (gt_python.h); 0: none */
    union {
        struct {
            uint32_t name_id;
            uint32_t device;
            uint32_t grid[3], block[3];
            uint32_t shared_mem;
        } launch;
        struct {
            uint64_t bytes;
            uint32_t device;
            uint8_t kind, host_mem, async;
        } copy;
        struct {
            uint64_t bytes;
            uint32_t device;
            uint8_t async;
        } memset;
        struct {
            uint64_t target;
            uint32_t polls;   /* GT_SYNC_*_QUERY: polls folded into this event (gt_poll_fold, hot/gt_call.c) */
            uint8_t kind;
        } sync;
        struct {
            uint64_t ptr, bytes;
            uint8_t kind;
        } alloc;
        struct {              /* category GT_CAT_MODULE */
            uint64_t bytes;   /* the image's length; 0: none or not known */
            uint8_t kind;     /* enum gt_module_kind */
            uint8_t jit;      /* PTX the driver compiled */
        } module;
        struct {              /* category GT_CAT_GRAPH_BUILD, or api == GT_API_GRAPH_NODE */
            uint64_t node;    /* CUPTI's graphNodeId; 0: unknown (CUPTI off) */
            uint64_t orig;    /* GT_GN_CLONE: the original node's id */
            uint32_t graph;   /* CUPTI's graphId */
            uint32_t name_id; /* kernel nodes: the kernel (hot/gt_names.h) */
            uint32_t api;     /* GT_API_GRAPH_NODE: the call that made it (hook table index) */
            uint8_t kind;     /* enum gt_gnode_kind */
        } gnode;
        struct {              /* api == GT_API_NVTX (hot/gt_nvtx.h) */
            uint64_t id;      /* the range's id; the named object (thread, stream, category) */
            uint64_t payload; /* raw bits, as payload_type says */
            uint32_t name;    /* hot/gt_nvtx.h string id; 0: none */
            uint32_t domain;  /* string id of the domain's name; 0: the default domain */
            uint32_t category;
            uint8_t kind;     /* enum gt_nvtx_kind */
            uint8_t payload_type; /* NVTX's nvtxPayloadType_t; 0: none */
        } nvtx;
        struct {              /* api == GT_API_SAMPLE */
            uint32_t tid;     /* the thread sampled (ev.tid is the sampler's) */
            int32_t syscall;  /* the system call it is blocked in; -1: none */
            uint8_t state;    /* enum gt_sample_state */
        } sample;
    } u;
};

#endif
