/* gt_names.c: kernel handle -> interned name id.
 *
 * The map is open-addressed with atomic keys so launches look names up
 * without a lock; only the first sight of a kernel takes the slow path,
 * which asks CUDA for the name and interns it under a mutex. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "base/gt_cuda.h"
#include "hot/gt_names.h"
#include "hot/gt_symbols_lookup.h"

#define GT_NAMES_SLOTS 16384u  /* handles; power of two */
#define GT_NAMES_MAX   8192u   /* distinct names */
#define GT_NAME_UNNAMED UINT32_MAX

static _Atomic(uintptr_t) gt_name_keys[GT_NAMES_SLOTS];
static _Atomic(uint32_t) gt_name_vals[GT_NAMES_SLOTS];
static _Atomic(const char *) gt_name_strs[GT_NAMES_MAX + 1];
static uint32_t gt_name_count;
static pthread_mutex_t gt_names_lock = PTHREAD_MUTEX_INITIALIZER;

static uint32_t gt_ptr_hash(uintptr_t p)
{
    uint64_t x = (uint64_t)p * 0x9E3779B97F4A7C15ull;
    return (uint32_t)(x >> 40);
}

static uint32_t gt_map_get(uintptr_t key)
{
    uint32_t i = gt_ptr_hash(key) & (GT_NAMES_SLOTS - 1);
    for (uint32_t n = 0; n < GT_NAMES_SLOTS; n++, i = (i + 1) & (GT_NAMES_SLOTS - 1)) {
        uintptr_t k = atomic_load_explicit(&gt_name_keys[i], memory_order_acquire);
        if (k == key) {
            /* The value is stored before the key is published. */
            return atomic_load_explicit(&gt_name_vals[i], memory_order_relaxed);
        }
        if (k == 0)
            return 0;
    }
    return 0;
}

/* Callers hold gt_names_lock, so keys only ever go from 0 to a value once. */
static void gt_map_put(uintptr_t key, uint32_t id)
{
    uint32_t i = gt_ptr_hash(key) & (GT_NAMES_SLOTS - 1);
    for (uint32_t n = 0; n < GT_NAMES_SLOTS * 3 / 4; n++, i = (i + 1) & (GT_NAMES_SLOTS - 1)) {
        uintptr_t k = atomic_load_explicit(&gt_name_keys[i], memory_order_relaxed);
        if (k == key) {
            atomic_store_explicit(&gt_name_vals[i], id, memory_order_relaxed);
            return;
        }
        if (k == 0) {
            atomic_store_explicit(&gt_name_vals[i], id, memory_order_relaxed);
            atomic_store_explicit(&gt_name_keys[i], key, memory_order_release);
            return;
        }
    }
}

/* Returns the id of an identical string if interned before. */
static uint32_t gt_intern_locked(const char *name)
{
    for (uint32_t id = 1; id <= gt_name_count; id++) {
        const char *s = atomic_load_explicit(&gt_name_strs[id], memory_order_relaxed);
        if (s && strcmp(s, name) == 0)
            return id;
    }
    if (gt_name_count >= GT_NAMES_MAX)
        return 0;
    char *copy = strdup(name);
    if (!copy)
        return 0;
    uint32_t id = ++gt_name_count;
    atomic_store_explicit(&gt_name_strs[id], copy, memory_order_release);
    return id;
}

static const char *gt_ask_cuda_name(const void *handle, int src)
{
    typedef CUresult (*drv_name_fn)(const char **, const void *);
    typedef cudaError_t (*rt_name_fn)(const char **, const void *);
    const char *name = NULL;
    if (src == GT_NAME_HOSTFUN) {
        rt_name_fn f = (rt_name_fn)gt_lookup_symbol("cudaFuncGetName");
        if (f && f(&name, handle) == cudaSuccess)
            return name;
        return NULL;
    }
    if (src == GT_NAME_DRV_FUNC) {
        drv_name_fn f = (drv_name_fn)gt_lookup_symbol("cuFuncGetName");
        if (f && f(&name, handle) == CUDA_SUCCESS && name)
            return name;
    }
    /* A CUkernel stands in for a CUfunction in cuLaunchKernel, and is what
     * cudaKernel_t is. */
    drv_name_fn k = (drv_name_fn)gt_lookup_symbol("cuKernelGetName");
    if (k && k(&name, handle) == CUDA_SUCCESS && name)
        return name;
    return NULL;
}

uint32_t gt_names_lookup(const void *handle, int src)
{
    if (!handle)
        return 0;
    uint32_t id = gt_map_get((uintptr_t)handle);
    if (id)
        return id == GT_NAME_UNNAMED ? 0 : id;
    const char *name = gt_ask_cuda_name(handle, src);
    pthread_mutex_lock(&gt_names_lock);
    id = name ? gt_intern_locked(name) : 0;
    /* Remember failures too, so an unnamed kernel costs one lookup. */
    gt_map_put((uintptr_t)handle, id ? id : GT_NAME_UNNAMED);
    pthread_mutex_unlock(&gt_names_lock);
    return id;
}

uint32_t gt_names_known(const void *handle)
{
    uint32_t id = handle ? gt_map_get((uintptr_t)handle) : 0;
    return id == GT_NAME_UNNAMED ? 0 : id;
}

void gt_names_register(const void *handle, const char *name)
{
    if (!handle || !name)
        return;
    pthread_mutex_lock(&gt_names_lock);
    uint32_t id = gt_intern_locked(name);
    if (id)
        gt_map_put((uintptr_t)handle, id);
    pthread_mutex_unlock(&gt_names_lock);
}

void gt_names_alias(const void *handle, const void *known)
{
    uint32_t id = gt_map_get((uintptr_t)known);
    if (!id || id == GT_NAME_UNNAMED || !handle)
        return;
    pthread_mutex_lock(&gt_names_lock);
    gt_map_put((uintptr_t)handle, id);
    pthread_mutex_unlock(&gt_names_lock);
}

const char *gt_names_get(uint32_t id)
{
    if (id == 0 || id > GT_NAMES_MAX)
        return NULL;
    return atomic_load_explicit(&gt_name_strs[id], memory_order_acquire);
}

void gt_names_fork_lock(void)
{
    pthread_mutex_lock(&gt_names_lock);
}

void gt_names_fork_unlock(void)
{
    pthread_mutex_unlock(&gt_names_lock);
}
