/* gt_nvtx.h: NVTX ranges, marks and names, recorded through NVTX's own
 * injection interface: the program's NVTX code loads the library that
 * NVTX_INJECTION64_PATH names and calls its InitializeInjectionNvtx2,
 * which fills NVTX's function table with the callbacks in gt_nvtx.c.
 *
 * Each callback leaves one event (api GT_API_NVTX) in its thread's ring,
 * like a call: no lock, no allocation. Its strings (messages, domain and
 * category names) are interned into a lock-free table (base/gt_idtab) of
 * bounded size; the writer reads them by id. */
#ifndef GT_NVTX_H
#define GT_NVTX_H

#include <stdint.h>

enum gt_nvtx_kind {
    GT_NVTX_PUSH,          /* nvtxRangePush*, nvtxDomainRangePushEx */
    GT_NVTX_POP,           /* nvtxRangePop, nvtxDomainRangePop */
    GT_NVTX_START,         /* nvtxRangeStart*: id = the nvtxRangeId_t returned */
    GT_NVTX_END,           /* nvtxRangeEnd: id = the range ended */
    GT_NVTX_MARK,
    GT_NVTX_NAME_THREAD,   /* nvtxNameOsThread: id = the thread id */
    GT_NVTX_NAME_STREAM,   /* nvtxNameCudaStream: id = the cudaStream_t */
    GT_NVTX_NAME_CUSTREAM, /* nvtxNameCuStream: id = the CUstream */
    GT_NVTX_NAME_CATEGORY, /* nvtxNameCategory, nvtxDomainNameCategory: id = the category */
    GT_NVTX_KIND_COUNT
};

/* Longest string kept, in bytes of UTF-8; longer ones are cut and counted. */
#define GT_NVTX_STR_MAX 256u

/* The bytes of a string id, not NUL-terminated; returns their count, or
 * -1 for an unknown id. Writer side. */
int gt_nvtx_string(uint32_t id, const char **bytes);
/* Strings cut to GT_NVTX_STR_MAX, and strings the full table turned away. */
uint64_t gt_nvtx_truncated(void);
uint64_t gt_nvtx_strings_dropped(void);

#endif
