/* gt_hooks.c: the wrappers, generated from gt_hooks.def, and how each finds
 * the real function it stands in front of. */
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#include "base/gt_cuda.h"
#include "cupti/gt_cupti_app.h"
#include "hot/gt_call.h"
#include "hot/gt_crange.h"
#include "hot/gt_graph.h"
#include "hot/gt_hooks.h"
#include "hot/gt_readers.h"
#include "hot/gt_symbols_lookup.h"

/* Deprecated entry points are still called by programs, so still wrapped
 * (and listed in the table) here. */
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

#define GT_ERR_RT  cudaErrorSymbolNotFound
#define GT_ERR_DRV CUDA_ERROR_NOT_FOUND
#define GT_RET_RT  cudaError_t
#define GT_RET_DRV CUresult

#define GT_HOOK(lib, name, cat, params, args, reader)                          \
    GT_EXPORT GT_RET_##lib name params                                         \
    {                                                                          \
        typedef GT_RET_##lib (*real_t) params;                                 \
        real_t real = (real_t)gt_real(GT_API_##name);                          \
        struct gt_call call;                                                   \
        if (!real)                                                             \
            return GT_ERR_##lib;                                               \
        int how = gt_call_begin(&call, GT_API_##name, GT_CAT_##cat);           \
        if (!how)                                                              \
            return real args;                                                  \
        GT_RET_##lib res = real args;                                          \
        if (how < 0) {                                                         \
            gt_call_pass_end();                                                \
            return res;                                                        \
        }                                                                      \
        gt_call_stop(&call);                                                   \
        struct gt_event *ev = &call.ev;                                        \
        (void)ev;                                                              \
        reader;                                                                \
        gt_call_end(&call, (int)res, GT_CAT_##cat);                            \
        return res;                                                            \
    }
#define GT_HOOK_VOID(lib, name, cat, params, args, reader)                     \
    GT_EXPORT void name params                                                 \
    {                                                                          \
        typedef void (*real_t) params;                                         \
        real_t real = (real_t)gt_real(GT_API_##name);                          \
        struct gt_call call;                                                   \
        if (!real)                                                             \
            return;                                                            \
        int how = gt_call_begin(&call, GT_API_##name, GT_CAT_##cat);           \
        if (!how) {                                                            \
            real args;                                                         \
            return;                                                            \
        }                                                                      \
        real args;                                                             \
        if (how < 0) {                                                         \
            gt_call_pass_end();                                                \
            return;                                                            \
        }                                                                      \
        gt_call_stop(&call);                                                   \
        struct gt_event *ev = &call.ev;                                        \
        (void)ev;                                                              \
        reader;                                                                \
        gt_call_end(&call, 0, GT_CAT_##cat);                                   \
    }
/* The profiler API: nothing recorded; a capture range starts after a
 * successful start and ends before a stop, so neither call is in its
 * window. The first of them may be the process's first CUDA call: it
 * starts the session, which reads the capture range's setting. */
#define GT_HOOK_PROFILER(lib, name, start)                                     \
    GT_EXPORT GT_RET_##lib name(void)                                          \
    {                                                                          \
        typedef GT_RET_##lib (*real_t)(void);                                  \
        real_t real = (real_t)gt_real(GT_API_##name);                          \
        if (!real)                                                             \
            return GT_ERR_##lib;                                               \
        if (gt_tls_busy)                                                       \
            return real();                                                     \
        int saved = errno;                                                     \
        gt_tls_busy = 1;                                                       \
        if (atomic_load(&gt_state) == GT_STATE_IDLE)                           \
            gt_call_starter();                                                 \
        if (!(start))                                                          \
            gt_crange_profiler(0);                                             \
        errno = saved;                                                         \
        GT_RET_##lib res = real();                                             \
        saved = errno;                                                         \
        if ((start) && res == 0)                                               \
            gt_crange_profiler(1);                                             \
        gt_tls_busy = 0;                                                       \
        errno = saved;                                                         \
        return res;                                                            \
    }
/* The program's own CUPTI calls: answered beside the tracer's CUPTI, on
 * any thread, busy or not (a program's bufferCompleted may run on a thread
 * of the tracer's and ask CUPTI for its dropped records). */
#define GT_HOOK_CUPTI(name, params, args, impl)                                \
    GT_EXPORT CUptiResult name params                                          \
    {                                                                          \
        void *real = gt_real(GT_API_##name);                                   \
        return impl;                                                           \
    }
#include "hot/gt_hooks.def"
#undef GT_HOOK
#undef GT_HOOK_VOID
#undef GT_HOOK_PROFILER
#undef GT_HOOK_CUPTI

const struct gt_hook_info gt_hooks[GT_API_COUNT] = {
#define GT_HOOK(lib, name, cat, params, args, reader) \
    [GT_API_##name] = {#name, GT_LIB_##lib, GT_CAT_##cat, (void *)name},
#define GT_HOOK_VOID GT_HOOK
#include "hot/gt_hooks.def"
#undef GT_HOOK
#undef GT_HOOK_VOID
};

static _Atomic(void *) gt_real_fn[GT_API_COUNT];

#define GT_FIND_MAX 8

struct gt_find {
    void *self_base;
    int n;
    char paths[GT_FIND_MAX][512];
};

/* Notes the loaded CUDA libraries other than ours: they are often
 * dlopen'ed with RTLD_LOCAL (by the runtime, by Python extension modules),
 * where RTLD_NEXT cannot see them. Only notes: dlsym or dlopen here, under
 * the loader's write lock that dl_iterate_phdr holds, would take the
 * loader's other lock in the opposite order to a dlopen on another thread,
 * and the two threads would wait for each other for ever. */
static int gt_find_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    struct gt_find *f = arg;
    if (!info->dlpi_name || !info->dlpi_name[0] || (void *)info->dlpi_addr == f->self_base)
        return 0;
    if (!strstr(info->dlpi_name, "libcuda") && !strstr(info->dlpi_name, "libcudart"))
        return 0;
    size_t len = strlen(info->dlpi_name);
    if (len < sizeof(f->paths[0])) {
        memcpy(f->paths[f->n], info->dlpi_name, len + 1);
        f->n++;
    }
    return f->n == GT_FIND_MAX;
}

static void *gt_self_base(void)
{
    static _Atomic(void *) base;
    void *b = atomic_load_explicit(&base, memory_order_relaxed);
    if (!b) {
        Dl_info di;
        if (dladdr((void *)gt_self_base, &di))
            b = di.dli_fbase;
        atomic_store_explicit(&base, b, memory_order_relaxed);
    }
    return b;
}

void *gt_lookup_symbol(const char *name)
{
    void *p = dlsym(RTLD_NEXT, name);
    if (p)
        return p;
    struct gt_find f;
    f.self_base = gt_self_base();
    f.n = 0;
    dl_iterate_phdr(gt_find_cb, &f);
    for (int i = 0; i < f.n; i++) {
        void *h = dlopen(f.paths[i], RTLD_LAZY | RTLD_NOLOAD);
        if (!h)
            continue; /* unloaded meanwhile */
        p = dlsym(h, name);
        dlclose(h);
        if (p)
            return p;
    }
    /* Nothing loaded yet carries it: the runtime or driver this program
     * would load is the one it would get. */
    return NULL;
}

void *gt_real(uint32_t api)
{
    void *p = atomic_load_explicit(&gt_real_fn[api], memory_order_acquire);
    if (p)
        return p;
    int was_busy = gt_tls_busy;
    gt_tls_busy = 1; /* dlsym may allocate, and allocators may be traced */
    p = gt_lookup_symbol(gt_hooks[api].name);
    gt_tls_busy = was_busy;
    if (p == gt_hooks[api].wrapper)
        p = NULL;
    if (p)
        atomic_store_explicit(&gt_real_fn[api], p, memory_order_release);
    return p;
}

void *gt_wrap_lookup(uint32_t api, void *found)
{
    if (found == gt_hooks[api].wrapper)
        return found;
    void *cur = atomic_load_explicit(&gt_real_fn[api], memory_order_acquire);
    if (!cur && atomic_compare_exchange_strong(&gt_real_fn[api], &cur, found))
        cur = found;
    return cur == found ? gt_hooks[api].wrapper : found;
}

void *gt_wrap_driver_pointer(void *real)
{
    if (!real)
        return real;
    for (uint32_t i = 0; i < GT_API_COUNT; i++) {
        if (gt_hooks[i].lib != GT_LIB_DRV)
            continue;
        void *r = gt_real(i);
        if (r == real)
            return gt_hooks[i].wrapper;
    }
    return real;
}
