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

/* Handles: every kernel registered, launched or not (PyTorch's libraries
 * register some 24,000 at load time); at most 3/4 of the slots are used. */
#define GT_NAMES_SLOTS 131072u /* power of two */
#define GT_NAMES_MAX   8192u   /* distinct names launched */
#define GT_NAME_UNNAMED UINT32_MAX

static _Atomic(uintptr_t) gt_name_keys[GT_NAMES_SLOTS];
/* The name id; 0 while the handle has only its registered name. */
static _Atomic(uint32_t) gt_name_vals[GT_NAMES_SLOTS];
/* The name __cudaRegisterFunction gave (in the registering library's own
 * data, there while its kernels can run), interned at the first launch:
 * registering stays a store, and only launched kernels take a name id. */
static _Atomic(const char *) gt_name_pending[GT_NAMES_SLOTS];
static uint32_t gt_name_used;
static _Atomic(const char *) gt_name_strs[GT_NAMES_MAX + 1];
static uint32_t gt_name_count;
static pthread_mutex_t gt_names_lock = PTHREAD_MUTEX_INITIALIZER;

static uint32_t gt_ptr_hash(uintptr_t p)
{
    uint64_t x = (uint64_t)p * 0x9E3779B97F4A7C15ull;
    return (uint32_t)(x >> 40);
}

/* The key's slot, or -1. Lock-free: a key is published after its value. */
static int64_t gt_map_find(uintptr_t key)
{
    uint32_t i = gt_ptr_hash(key) & (GT_NAMES_SLOTS - 1);
    for (uint32_t n = 0; n < GT_NAMES_SLOTS; n++, i = (i + 1) & (GT_NAMES_SLOTS - 1)) {
        uintptr_t k = atomic_load_explicit(&gt_name_keys[i], memory_order_acquire);
        if (k == key)
            return i;
        if (k == 0)
            return -1;
    }
    return -1;
}

/* Callers hold gt_names_lock, so keys only ever go from 0 to a value once. */
static void gt_map_put(uintptr_t key, uint32_t id, const char *pending)
{
    uint32_t i = gt_ptr_hash(key) & (GT_NAMES_SLOTS - 1);
    for (uint32_t n = 0; n < GT_NAMES_SLOTS; n++, i = (i + 1) & (GT_NAMES_SLOTS - 1)) {
        uintptr_t k = atomic_load_explicit(&gt_name_keys[i], memory_order_relaxed);
        if (k == key) {
            atomic_store_explicit(&gt_name_pending[i], pending, memory_order_relaxed);
            atomic_store_explicit(&gt_name_vals[i], id, memory_order_release);
            return;
        }
        if (k == 0) {
            if (gt_name_used >= GT_NAMES_SLOTS / 4 * 3)
                return;
            gt_name_used++;
            atomic_store_explicit(&gt_name_pending[i], pending, memory_order_relaxed);
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

/* The id of a handle already in the map (a registration's name interned on
 * its first use); -1: not in the map. */
static int64_t gt_names_cached(const void *handle)
{
    int64_t i = gt_map_find((uintptr_t)handle);
    if (i < 0)
        return -1;
    uint32_t id = atomic_load_explicit(&gt_name_vals[i], memory_order_acquire);
    if (!id) {
        /* registered, launched for the first time: intern its name */
        pthread_mutex_lock(&gt_names_lock);
        id = atomic_load_explicit(&gt_name_vals[i], memory_order_relaxed);
        if (!id) {
            const char *name = atomic_load_explicit(&gt_name_pending[i], memory_order_relaxed);
            id = name ? gt_intern_locked(name) : 0;
            atomic_store_explicit(&gt_name_vals[i], id ? id : GT_NAME_UNNAMED, memory_order_release);
        }
        pthread_mutex_unlock(&gt_names_lock);
    }
    return id == GT_NAME_UNNAMED ? 0 : id;
}

uint32_t gt_names_lookup(const void *handle, int src)
{
    if (!handle)
        return 0;
    int64_t known = gt_names_cached(handle);
    if (known >= 0)
        return (uint32_t)known;
    const char *name = gt_ask_cuda_name(handle, src);
    pthread_mutex_lock(&gt_names_lock);
    uint32_t id = name ? gt_intern_locked(name) : 0;
    /* Remember failures too, so an unnamed kernel costs one lookup. */
    gt_map_put((uintptr_t)handle, id ? id : GT_NAME_UNNAMED, NULL);
    pthread_mutex_unlock(&gt_names_lock);
    return id;
}

uint32_t gt_names_known(const void *handle)
{
    int64_t known = handle ? gt_names_cached(handle) : -1;
    return known > 0 ? (uint32_t)known : 0;
}

void gt_names_register_copy(const void *handle, const char *name)
{
    if (!handle || !name)
        return;
    pthread_mutex_lock(&gt_names_lock);
    uint32_t id = gt_intern_locked(name);
    if (id)
        gt_map_put((uintptr_t)handle, id, NULL);
    pthread_mutex_unlock(&gt_names_lock);
}

void gt_names_register(const void *handle, const char *name)
{
    if (!handle || !name)
        return;
    pthread_mutex_lock(&gt_names_lock);
    gt_map_put((uintptr_t)handle, 0, name);
    pthread_mutex_unlock(&gt_names_lock);
}

void gt_names_alias(const void *handle, const void *known)
{
    int64_t i = gt_map_find((uintptr_t)known);
    if (i < 0 || !handle)
        return;
    pthread_mutex_lock(&gt_names_lock);
    uint32_t id = atomic_load_explicit(&gt_name_vals[i], memory_order_relaxed);
    const char *pending = atomic_load_explicit(&gt_name_pending[i], memory_order_relaxed);
    if (id != GT_NAME_UNNAMED && (id || pending))
        gt_map_put((uintptr_t)handle, id, pending);
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
