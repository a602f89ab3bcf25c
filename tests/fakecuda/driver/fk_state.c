/* fk_state.c: settings from the environment, contexts, kernels and their
 * durations, and the registry of memory the program allocated. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fk_driver.h"

pthread_mutex_t fk_lock = PTHREAD_MUTEX_INITIALIZER;
int fk_initialized;
struct CUctx_st fk_ctx[FK_MAX_DEVICES];
struct fk_settings fk_cfg;
static pid_t fk_init_pid;
static __thread CUcontext fk_tls_ctx;

FK_API uint64_t fakecuda_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ---- kernel durations ---- */

struct fk_dur {
    char *name;
    uint64_t ns;
};
static struct fk_dur *fk_durs;
static size_t fk_ndurs;

static void fk_set_dur_locked(const char *name, uint64_t ns)
{
    for (size_t i = 0; i < fk_ndurs; i++)
        if (strcmp(fk_durs[i].name, name) == 0) {
            fk_durs[i].ns = ns;
            return;
        }
    struct fk_dur *d = realloc(fk_durs, (fk_ndurs + 1) * sizeof(*d));
    if (!d)
        return;
    fk_durs = d;
    fk_durs[fk_ndurs].name = strdup(name);
    fk_durs[fk_ndurs++].ns = ns;
}

/* The plain name a mangled identifier encodes: _Z10big_kernelPfi -> big_kernel;
 * nested names (_ZN2ns3fooEv) give their last component. */
static void fk_plain_name(const char *m, char *out, size_t len)
{
    snprintf(out, len, "%s", m);
    if (strncmp(m, "_Z", 2) != 0)
        return;
    const char *p = m + 2;
    int nested = *p == 'N';
    if (nested)
        p++;
    const char *last = NULL;
    size_t last_len = 0;
    while (*p >= '0' && *p <= '9') {
        size_t n = strtoul(p, (char **)&p, 10);
        if (strlen(p) < n)
            break;
        last = p;
        last_len = n;
        p += n;
        if (!nested)
            break;
    }
    if (last && last_len < len) {
        memcpy(out, last, last_len);
        out[last_len] = 0;
    }
}

uint64_t fk_kernel_duration(const struct CUfunc_st *f)
{
    if (f->dur_ns)
        return f->dur_ns;
    char plain[256];
    fk_plain_name(f->name, plain, sizeof(plain));
    uint64_t ns = fk_cfg.kernel_ns;
    pthread_mutex_lock(&fk_lock);
    for (size_t i = 0; i < fk_ndurs; i++)
        if (strcmp(fk_durs[i].name, f->name) == 0 || strcmp(fk_durs[i].name, plain) == 0) {
            ns = fk_durs[i].ns;
            break;
        }
    pthread_mutex_unlock(&fk_lock);
    return ns;
}

int fk_function_fault(const struct CUfunc_st *f)
{
    char plain[256];
    fk_plain_name(f->name, plain, sizeof(plain));
    return fk_kernel_fault(f->name, plain);
}

FK_API void fakecuda_set_kernel_ns(const char *name, uint64_t ns)
{
    if (!name)
        return;
    pthread_mutex_lock(&fk_lock);
    fk_set_dur_locked(name, ns);
    pthread_mutex_unlock(&fk_lock);
}

/* Functions are interned by name and live as long as the process. */
static struct CUfunc_st **fk_funcs;
static size_t fk_nfuncs;

struct CUfunc_st *fk_function(const char *name)
{
    pthread_mutex_lock(&fk_lock);
    for (size_t i = 0; i < fk_nfuncs; i++)
        if (strcmp(fk_funcs[i]->name, name) == 0) {
            pthread_mutex_unlock(&fk_lock);
            return fk_funcs[i];
        }
    struct CUfunc_st *f = calloc(1, sizeof(*f));
    struct CUfunc_st **v = realloc(fk_funcs, (fk_nfuncs + 1) * sizeof(*v));
    if (!f || !v) {
        free(f);
        pthread_mutex_unlock(&fk_lock);
        return NULL;
    }
    fk_funcs = v;
    f->magic = FK_MAGIC_FUNC;
    f->name = strdup(name);
    fk_funcs[fk_nfuncs++] = f;
    pthread_mutex_unlock(&fk_lock);
    return f;
}

FK_API CUfunction fakecuda_driver_kernel(const char *name, uint64_t ns)
{
    if (!name)
        return NULL;
    struct CUfunc_st *f = fk_function(name);
    if (f && ns)
        fakecuda_set_kernel_ns(name, ns);
    return f;
}

/* ---- settings ---- */

static void fk_warn(const char *var, const char *val, const char *def)
{
    fprintf(stderr, "fakecuda: %s='%s' is not valid; using %s\n", var, val, def);
}

static uint64_t fk_env_u64(const char *var, uint64_t def)
{
    const char *v = getenv(var);
    if (!v)
        return def;
    char *end;
    unsigned long long x = strtoull(v, &end, 10);
    if (!*v || *end || v[0] == '-') {
        fk_warn(var, v, "its default");
        return def;
    }
    return x;
}

static double fk_env_bw(const char *var, double def)
{
    const char *v = getenv(var);
    if (!v)
        return def;
    char *end;
    double x = strtod(v, &end);
    if (!*v || *end || !(x > 0)) {
        fk_warn(var, v, "its default");
        return def;
    }
    return x;
}

static void fk_parse_kernel_ns(void)
{
    fk_cfg.kernel_ns = 5000;
    const char *v = getenv("FAKECUDA_KERNEL_NS");
    if (!v)
        return;
    char *copy = strdup(v), *save = NULL;
    for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(tok, '=');
        char *num = eq ? eq + 1 : tok, *end;
        unsigned long long ns = strtoull(num, &end, 10);
        if (!*num || *end || *num == '-') {
            fk_warn("FAKECUDA_KERNEL_NS", tok, "the default");
            continue;
        }
        if (eq) {
            *eq = 0;
            fk_set_dur_locked(tok, ns);
        } else {
            fk_cfg.kernel_ns = ns;
        }
    }
    free(copy);
}

static pthread_once_t fk_once = PTHREAD_ONCE_INIT;
static int fk_forked;

/* Checked on every call: a flag set at fork, not a getpid() system call. */
static void fk_mark_forked(void)
{
    fk_forked = 1;
}

static void fk_init_settings(void)
{
    fk_parse_kernel_ns();
    fk_parse_kernel_fail(fk_warn);
    fk_cfg.launch_ns = fk_env_u64("FAKECUDA_LAUNCH_NS", 0);
    fk_cfg.jit_ns = fk_env_u64("FAKECUDA_JIT_NS", 1000000);
    fk_cfg.ctx_create_ns = fk_env_u64("FAKECUDA_CTX_CREATE_NS", 0);
    fk_cfg.launch_latency_ns = fk_env_u64("FAKECUDA_LAUNCH_LATENCY_NS", 0);
    fk_cfg.activity_lag_us = fk_env_u64("FAKECUDA_ACTIVITY_LAG_US", 0);
    if (fk_cfg.activity_lag_us > 10000000) {
        fk_warn("FAKECUDA_ACTIVITY_LAG_US", getenv("FAKECUDA_ACTIVITY_LAG_US"), "10 s");
        fk_cfg.activity_lag_us = 10000000;
    }
    uint64_t depth = fk_env_u64("FAKECUDA_QUEUE_DEPTH", 1024);
    fk_cfg.queue_depth = depth > (1u << 24) ? 1u << 24 : (unsigned)depth;
    fk_cfg.pinned_bw = fk_env_bw("FAKECUDA_PINNED_BW", 25);
    fk_cfg.pageable_bw = fk_env_bw("FAKECUDA_PAGEABLE_BW", 10);
    fk_cfg.dtod_bw = fk_env_bw("FAKECUDA_DTOD_BW", 1000);
    fk_cfg.copy_latency_ns = fk_env_u64("FAKECUDA_COPY_LATENCY_NS", 1000);
    fk_cfg.devices = (int)fk_env_u64("FAKECUDA_DEVICES", 1);
    if (fk_cfg.devices < 1)
        fk_cfg.devices = 1;
    if (fk_cfg.devices > FK_MAX_DEVICES) {
        fk_warn("FAKECUDA_DEVICES", getenv("FAKECUDA_DEVICES"), "8");
        fk_cfg.devices = FK_MAX_DEVICES;
    }
    for (int d = 0; d < FK_MAX_DEVICES; d++)
        fk_ctx[d] = (struct CUctx_st){.magic = FK_MAGIC_CTX, .id = (uint32_t)d + 1, .device = d};
    fk_init_pid = getpid();
    pthread_atfork(NULL, NULL, fk_mark_forked);
}

void fk_init_once(void)
{
    pthread_once(&fk_once, fk_init_settings);
}

int fk_is_forked_child(void)
{
    return fk_initialized && fk_forked && getpid() != fk_init_pid;
}

CUresult fk_check_ctx(void)
{
    if (!fk_initialized)
        return CUDA_ERROR_NOT_INITIALIZED;
    if (fk_is_forked_child())
        return CUDA_ERROR_NOT_INITIALIZED;
    if (!fk_tls_ctx)
        return CUDA_ERROR_INVALID_CONTEXT;
    /* a device that has failed fails every call from then on */
    int e = fk_fault_by(fk_tls_ctx->device, fakecuda_now_ns());
    return e ? (CUresult)e : CUDA_SUCCESS;
}

int fk_current_device(void)
{
    return fk_tls_ctx ? fk_tls_ctx->device : 0;
}

CUcontext fk_current_ctx(void)
{
    return fk_tls_ctx;
}

void fk_set_current_ctx(CUcontext c)
{
    fk_tls_ctx = c;
}

/* ---- memory registry ---- */

struct fk_alloc {
    uintptr_t base;
    size_t len;
    int kind;
    int owned;
    int device; /* current at allocation */
};
static struct fk_alloc *fk_allocs;
static size_t fk_nallocs, fk_cap;
static pthread_mutex_t fk_mem_lock = PTHREAD_MUTEX_INITIALIZER;
/* Device (and managed) memory allocated on each device, for cuMemGetInfo. */
static uint64_t fk_dev_used[FK_MAX_DEVICES];

static void fk_count_locked(const struct fk_alloc *a, int sign)
{
    if ((a->kind == FK_MEM_DEVICE || a->kind == FK_MEM_MANAGED) && a->device >= 0 && a->device < FK_MAX_DEVICES)
        fk_dev_used[a->device] += sign > 0 ? a->len : -(uint64_t)a->len;
}

uint64_t fk_mem_device_used(int device)
{
    pthread_mutex_lock(&fk_mem_lock);
    uint64_t n = device >= 0 && device < FK_MAX_DEVICES ? fk_dev_used[device] : 0;
    pthread_mutex_unlock(&fk_mem_lock);
    return n;
}

void fk_mem_add(uintptr_t base, size_t len, int kind, int owned)
{
    pthread_mutex_lock(&fk_mem_lock);
    if (fk_nallocs == fk_cap) {
        size_t cap = fk_cap ? fk_cap * 2 : 256;
        struct fk_alloc *a = realloc(fk_allocs, cap * sizeof(*a));
        if (!a) {
            pthread_mutex_unlock(&fk_mem_lock);
            return;
        }
        fk_allocs = a;
        fk_cap = cap;
    }
    fk_allocs[fk_nallocs] = (struct fk_alloc){base, len ? len : 1, kind, owned, fk_current_device()};
    fk_count_locked(&fk_allocs[fk_nallocs++], 1);
    pthread_mutex_unlock(&fk_mem_lock);
}

/* Returns 1 if base was a registered allocation start (and its kind), and
 * whether the driver owns (must free) it through the return value 2. */
int fk_mem_remove(uintptr_t base, int *kind, size_t *len)
{
    int r = 0;
    pthread_mutex_lock(&fk_mem_lock);
    for (size_t i = 0; i < fk_nallocs; i++)
        if (fk_allocs[i].base == base) {
            if (kind)
                *kind = fk_allocs[i].kind;
            if (len)
                *len = fk_allocs[i].len;
            r = fk_allocs[i].owned ? 2 : 1;
            fk_count_locked(&fk_allocs[i], -1);
            fk_allocs[i] = fk_allocs[--fk_nallocs];
            break;
        }
    pthread_mutex_unlock(&fk_mem_lock);
    return r;
}

int fk_mem_fits(uintptr_t p, size_t n)
{
    int fits = 1;
    pthread_mutex_lock(&fk_mem_lock);
    for (size_t i = 0; i < fk_nallocs; i++)
        if (p >= fk_allocs[i].base && p < fk_allocs[i].base + fk_allocs[i].len) {
            fits = n <= fk_allocs[i].base + fk_allocs[i].len - p;
            break;
        }
    pthread_mutex_unlock(&fk_mem_lock);
    return fits;
}

int fk_mem_device(uintptr_t p)
{
    int d = -1;
    pthread_mutex_lock(&fk_mem_lock);
    for (size_t i = 0; i < fk_nallocs; i++)
        if (p >= fk_allocs[i].base && p < fk_allocs[i].base + fk_allocs[i].len) {
            if (fk_allocs[i].kind == FK_MEM_DEVICE || fk_allocs[i].kind == FK_MEM_MANAGED)
                d = fk_allocs[i].device;
            break;
        }
    pthread_mutex_unlock(&fk_mem_lock);
    return d;
}

int fk_mem_range(uintptr_t p, uintptr_t *base, size_t *len)
{
    int found = 0;
    pthread_mutex_lock(&fk_mem_lock);
    for (size_t i = 0; i < fk_nallocs; i++)
        if (p >= fk_allocs[i].base && p < fk_allocs[i].base + fk_allocs[i].len) {
            *base = fk_allocs[i].base;
            *len = fk_allocs[i].len;
            found = fk_allocs[i].kind == FK_MEM_DEVICE || fk_allocs[i].kind == FK_MEM_MANAGED;
            break;
        }
    pthread_mutex_unlock(&fk_mem_lock);
    return found;
}

int fk_mem_kind(uintptr_t p)
{
    int kind = FK_MEM_PAGEABLE;
    pthread_mutex_lock(&fk_mem_lock);
    for (size_t i = 0; i < fk_nallocs; i++)
        if (p >= fk_allocs[i].base && p < fk_allocs[i].base + fk_allocs[i].len) {
            kind = fk_allocs[i].kind;
            break;
        }
    pthread_mutex_unlock(&fk_mem_lock);
    return kind;
}
