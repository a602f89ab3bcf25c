/* fk_export.c: the driver's private tables (cuGetExportTable), as far as
 * NVIDIA's runtime needs them to start. The runtime a library links in
 * statically (CuPy's cupy_backends.cuda.api.runtime, cuBLAS, cuDNN) cannot
 * be replaced by the simulated libcudart: it asks the driver, before its
 * first call answers, for tables of functions keyed by UUID that no header
 * declares. Their UUIDs and the slots used were worked out by ZLUDA's
 * authors (github.com/vosen/ZLUDA, dark_api); what each slot does here is
 * the least that keeps that runtime going on the simulated GPU, and each was
 * added when a client's runtime called it (see README.md, "Private tables").
 *
 * A table is an array of pointers whose first entry is its size in bytes
 * (but for the context-local-storage one). A slot the runtime calls that is
 * not here would be a NULL jump: FAKECUDA_EXPORT_LOG=1 names each table
 * asked for on stderr, to find which. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fk_driver.h"

#define FK_TABLE_SIZE(n) ((void *)(uintptr_t)(sizeof(void *) * (n)))

static int fk_x_log(void)
{
    const char *v = getenv("FAKECUDA_EXPORT_LOG");
    return v && *v == '1';
}

/* A slot whose work has no counterpart on the simulated GPU: it does
 * nothing and succeeds (FAKECUDA_EXPORT_LOG=1 names each call). */
#define FK_X_NOOP(table, slot)                                                             \
    static uintptr_t fk_x_##table##_##slot(void)                                          \
    {                                                                                     \
        if (fk_x_log())                                                                   \
            fprintf(stderr, "fakecuda: export table %s slot %d called\n", #table, slot); \
        return 0;                                                                         \
    }

/* A slot that would hand back something (a module loaded from a fat
 * binary): refused rather than succeeding with its output unset. CUDA 13's
 * runtime loads its fat binaries with cuLibraryLoadData instead. */
#define FK_X_REFUSE(table, slot)                                                              \
    static CUresult fk_x_##table##_##slot(void)                                              \
    {                                                                                        \
        if (fk_x_log())                                                                      \
            fprintf(stderr, "fakecuda: export table %s slot %d refused\n", #table, slot);   \
        return CUDA_ERROR_NOT_SUPPORTED;                                                     \
    }

/* ---- CUDART_INTERFACE {6bd5fb6c-5bf4-e74a-8987-d93912fd9df9} ---- */

/* Slot 2: the device's primary context, retained (cudaSetDevice's and
 * every runtime call's context). */
static CUresult fk_x_primary_ctx(CUcontext *c, CUdevice d)
{
    return cuDevicePrimaryCtxRetain(c, d);
}

FK_X_REFUSE(cudart, 1) /* a module from a fat binary, and slots 6 and 8 likewise */
FK_X_NOOP(cudart, 3)
FK_X_NOOP(cudart, 4)
FK_X_NOOP(cudart, 5)
FK_X_REFUSE(cudart, 6)
FK_X_NOOP(cudart, 7)
FK_X_REFUSE(cudart, 8)
FK_X_NOOP(cudart, 9)
FK_X_NOOP(cudart, 10)
FK_X_NOOP(cudart, 11)
FK_X_NOOP(cudart, 12)
static void *fk_x_cudart[13] = {FK_TABLE_SIZE(13),      (void *)fk_x_cudart_1,  (void *)fk_x_primary_ctx,
                                (void *)fk_x_cudart_3,  (void *)fk_x_cudart_4,  (void *)fk_x_cudart_5,
                                (void *)fk_x_cudart_6,  (void *)fk_x_cudart_7,  (void *)fk_x_cudart_8,
                                (void *)fk_x_cudart_9,  (void *)fk_x_cudart_10, (void *)fk_x_cudart_11,
                                (void *)fk_x_cudart_12};

/* ---- TOOLS_RUNTIME_CALLBACK_HOOKS {a094798c-2e74-2e74-93f2-0800200c0a66} ---- */

/* Slots 2 and 6: buffers the runtime writes its tool-callback state into;
 * nothing reads them on the simulated GPU. */
static uint8_t fk_x_hooks_a[1024], fk_x_hooks_b[14];

static void fk_x_hooks_buf_a(void **p, size_t *n)
{
    *p = fk_x_hooks_a;
    *n = sizeof fk_x_hooks_a;
}

static void fk_x_hooks_buf_b(void **p, size_t *n)
{
    *p = fk_x_hooks_b;
    *n = sizeof fk_x_hooks_b;
}

FK_X_NOOP(hooks, 1)
FK_X_NOOP(hooks, 3)
FK_X_NOOP(hooks, 4)
FK_X_NOOP(hooks, 5)
static void *fk_x_hooks[7] = {FK_TABLE_SIZE(7),           (void *)fk_x_hooks_1, (void *)fk_x_hooks_buf_a,
                              (void *)fk_x_hooks_3,       (void *)fk_x_hooks_4, (void *)fk_x_hooks_5,
                              (void *)fk_x_hooks_buf_b};

/* ---- TOOLS_TLS {42d85a81-23f6-cb47-8298-f6e78a3aecdc} ---- */

FK_X_NOOP(tools_tls, 1)
FK_X_NOOP(tools_tls, 2)
FK_X_NOOP(tools_tls, 3)
static void *fk_x_tools_tls[4] = {FK_TABLE_SIZE(4), (void *)fk_x_tools_tls_1, (void *)fk_x_tools_tls_2,
                                  (void *)fk_x_tools_tls_3};

/* ---- CONTEXT_LOCAL_STORAGE {c693336e-1121-df11-a8c3-68f355d89593} ---- */

/* The runtime keeps its per-context state here, under a key of its own:
 * slot 0 puts, 1 deletes, 2 gets (a context of NULL is the current one).
 * This table alone starts with a function, not its size. */
#define FK_X_CLS_MAX 64

static struct {
    CUcontext ctx;
    void *key, *value;
} fk_x_cls[FK_X_CLS_MAX];
static pthread_mutex_t fk_x_cls_lock = PTHREAD_MUTEX_INITIALIZER;

static CUcontext fk_x_ctx(CUcontext c)
{
    return c ? c : fk_current_ctx();
}

static int fk_x_cls_find(CUcontext c, void *key)
{
    for (int i = 0; i < FK_X_CLS_MAX; i++)
        if (fk_x_cls[i].key == key && fk_x_cls[i].ctx == c)
            return i;
    return -1;
}

static CUresult fk_x_cls_put(CUcontext c, void *key, void *value, void *dtor)
{
    (void)dtor; /* contexts are never destroyed here */
    c = fk_x_ctx(c);
    if (!c || !key)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&fk_x_cls_lock);
    int i = fk_x_cls_find(c, key);
    if (i < 0)
        i = fk_x_cls_find(NULL, NULL);
    if (i >= 0) {
        fk_x_cls[i].ctx = c;
        fk_x_cls[i].key = key;
        fk_x_cls[i].value = value;
    }
    pthread_mutex_unlock(&fk_x_cls_lock);
    return i >= 0 ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

static CUresult fk_x_cls_delete(CUcontext c, void *key)
{
    c = fk_x_ctx(c);
    pthread_mutex_lock(&fk_x_cls_lock);
    int i = fk_x_cls_find(c, key);
    if (i >= 0)
        memset(&fk_x_cls[i], 0, sizeof fk_x_cls[i]);
    pthread_mutex_unlock(&fk_x_cls_lock);
    return CUDA_SUCCESS;
}

static CUresult fk_x_cls_get(void **value, CUcontext c, void *key)
{
    if (!value)
        return CUDA_ERROR_INVALID_VALUE;
    c = fk_x_ctx(c);
    pthread_mutex_lock(&fk_x_cls_lock);
    int i = c && key ? fk_x_cls_find(c, key) : -1;
    *value = i >= 0 ? fk_x_cls[i].value : NULL;
    pthread_mutex_unlock(&fk_x_cls_lock);
    return i >= 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

static void *fk_x_cls_table[4] = {(void *)fk_x_cls_put, (void *)fk_x_cls_delete, (void *)fk_x_cls_get};

/* ---- CONTEXT_CHECKS {263e8860-7cd2-6143-92f6-bbd5006dfa7e} ---- */

/* Slot 2: whether a context is one the runtime may use (0: it may);
 * slot 3: a process-wide check, passed. Every simulated context is a
 * device's primary one. */
static CUresult fk_x_ctx_check(CUcontext c, uint32_t *verdict, const void **detail)
{
    (void)c;
    if (verdict)
        *verdict = 0;
    if (detail)
        *detail = NULL;
    return CUDA_SUCCESS;
}

static uint32_t fk_x_ctx_check_all(void)
{
    return 0;
}

FK_X_NOOP(ctx_checks, 1)
static void *fk_x_ctx_checks[4] = {FK_TABLE_SIZE(4), (void *)fk_x_ctx_checks_1, (void *)fk_x_ctx_check,
                                   (void *)fk_x_ctx_check_all};

/* ---- INTEGRITY_CHECK {d4082055-bde6-704b-8d34-ba123c66e1f2} ---- */

/* Slot 1: the runtime checks it talks to NVIDIA's driver by asking for an
 * HMAC-MD2, under a key both know, of the driver's version, the call's
 * version and time, the process, thread and these tables' addresses, and
 * every device's UUID and PCI place; the runtime computes the same. */
static CUresult fk_x_integrity(uint32_t version, uint64_t unix_seconds, uint64_t out[2]);
static void *fk_x_integrity_table[3] = {[0] = FK_TABLE_SIZE(3), [1] = (void *)fk_x_integrity};

static CUresult fk_x_integrity(uint32_t version, uint64_t unix_seconds, uint64_t out[2])
{
    static const uint8_t key[16] = {0x14, 0x6a, 0xdd, 0xae, 0x53, 0xa9, 0xa7, 0x52,
                                    0xaa, 0x08, 0x41, 0x36, 0x0b, 0xf5, 0x5a, 0x9f};
    if (!out)
        return CUDA_ERROR_INVALID_VALUE;
    /* the first two versions of the check answer constants */
    if (version % 10 < 2) {
        out[0] = version % 10 ? 0x1841181c03cb675cull : 0x3341181c03cb675cull;
        out[1] = 0x8ed383aa1f4cd1e8ull;
        return CUDA_SUCCESS;
    }
    int driver = 0, n = 0;
    cuDriverGetVersion(&driver);
    cuDeviceGetCount(&n);
    struct {
        uint32_t driver, version, pid, tid;
        const void *cudart, *table, *fn;
        uint64_t seconds;
    } in = {(uint32_t)driver, version, (uint32_t)getpid(), (uint32_t)pthread_self(), fk_x_cudart,
            fk_x_integrity_table, (const void *)fk_x_integrity, unix_seconds};
    _Static_assert(sizeof in == 48, "hashed as 48 bytes");
    struct fk_md2 m;
    fk_md2_init(&m);
    fk_md2_update(&m, key, sizeof key, 0x36);
    fk_md2_update(&m, &in, sizeof in, 0);
    for (int d = 0; d < n; d++) {
        struct {
            CUuuid uuid;
            int32_t domain, bus, device;
        } dev;
        _Static_assert(sizeof dev == 28, "hashed as 28 bytes");
        memset(&dev, 0, sizeof dev);
        cuDeviceGetUuid_v2(&dev.uuid, d);
        cuDeviceGetAttribute(&dev.domain, CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID, d);
        cuDeviceGetAttribute(&dev.bus, CU_DEVICE_ATTRIBUTE_PCI_BUS_ID, d);
        cuDeviceGetAttribute(&dev.device, CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID, d);
        fk_md2_update(&m, &dev, sizeof dev, 0);
    }
    uint8_t inner[16];
    fk_md2_final(&m, inner);
    fk_md2_init(&m);
    fk_md2_update(&m, key, sizeof key, 0x5c);
    fk_md2_update(&m, inner, sizeof inner, 0);
    fk_md2_final(&m, (uint8_t *)out);
    return CUDA_SUCCESS;
}

/* ---- lookup ---- */

static const struct {
    uint8_t uuid[16];
    void **table;
} fk_x_tables[] = {
    {{0x6b, 0xd5, 0xfb, 0x6c, 0x5b, 0xf4, 0xe7, 0x4a, 0x89, 0x87, 0xd9, 0x39, 0x12, 0xfd, 0x9d, 0xf9}, fk_x_cudart},
    {{0xa0, 0x94, 0x79, 0x8c, 0x2e, 0x74, 0x2e, 0x74, 0x93, 0xf2, 0x08, 0x00, 0x20, 0x0c, 0x0a, 0x66}, fk_x_hooks},
    {{0x42, 0xd8, 0x5a, 0x81, 0x23, 0xf6, 0xcb, 0x47, 0x82, 0x98, 0xf6, 0xe7, 0x8a, 0x3a, 0xec, 0xdc}, fk_x_tools_tls},
    {{0xc6, 0x93, 0x33, 0x6e, 0x11, 0x21, 0xdf, 0x11, 0xa8, 0xc3, 0x68, 0xf3, 0x55, 0xd8, 0x95, 0x93}, fk_x_cls_table},
    {{0x26, 0x3e, 0x88, 0x60, 0x7c, 0xd2, 0x61, 0x43, 0x92, 0xf6, 0xbb, 0xd5, 0x00, 0x6d, 0xfa, 0x7e}, fk_x_ctx_checks},
    {{0xd4, 0x08, 0x20, 0x55, 0xbd, 0xe6, 0x70, 0x4b, 0x8d, 0x34, 0xba, 0x12, 0x3c, 0x66, 0xe1, 0xf2},
     fk_x_integrity_table},
};

FK_API CUresult cuGetExportTable(const void **table, const CUuuid *id)
{
    if (!table || !id)
        return CUDA_ERROR_INVALID_VALUE;
    const uint8_t *u = (const uint8_t *)id->bytes;
    for (size_t i = 0; i < sizeof fk_x_tables / sizeof *fk_x_tables; i++)
        if (!memcmp(fk_x_tables[i].uuid, u, 16)) {
            *table = fk_x_tables[i].table;
            if (fk_x_log())
                fprintf(stderr, "fakecuda: export table %02x%02x%02x%02x served\n", u[0], u[1], u[2], u[3]);
            return CUDA_SUCCESS;
        }
    if (fk_x_log())
        fprintf(stderr, "fakecuda: export table %02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x "
                "not served\n", u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12],
                u[13], u[14], u[15]);
    *table = NULL;
    return CUDA_ERROR_NOT_SUPPORTED;
}
