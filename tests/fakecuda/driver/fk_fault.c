/* fk_fault.c: device-side errors. A kernel named in FAKECUDA_KERNEL_FAIL
 * (or fakecuda_set_kernel_fail) fails on the GPU as a device assert or a
 * fault does: its launch succeeds; from the moment it ends the device's
 * context is broken, so every call that waits past that moment, and every
 * call made after it, returns the error (CUDA_ERROR_ASSERT or
 * CUDA_ERROR_LAUNCH_FAILED), sticky until the primary context is reset. */
#include <stdlib.h>
#include <string.h>

#include "fk_driver.h"

static _Atomic uint64_t fk_fault_time[FK_MAX_DEVICES] = {
    UINT64_MAX, UINT64_MAX, UINT64_MAX, UINT64_MAX, UINT64_MAX, UINT64_MAX, UINT64_MAX, UINT64_MAX};
static _Atomic int fk_fault_code[FK_MAX_DEVICES];

void fk_fault_at(int device, uint64_t t, int code)
{
    pthread_mutex_lock(&fk_lock);
    if (t < atomic_load(&fk_fault_time[device])) {
        atomic_store(&fk_fault_code[device], code);
        atomic_store(&fk_fault_time[device], t);
    }
    pthread_mutex_unlock(&fk_lock);
}

int fk_fault_by(int device, uint64_t t)
{
    return atomic_load(&fk_fault_time[device]) <= t ? atomic_load(&fk_fault_code[device]) : 0;
}

void fk_fault_clear(int device)
{
    pthread_mutex_lock(&fk_lock);
    atomic_store(&fk_fault_time[device], UINT64_MAX);
    atomic_store(&fk_fault_code[device], 0);
    pthread_mutex_unlock(&fk_lock);
}

CUresult fk_wait_gpu(int device, uint64_t t)
{
    uint64_t f = atomic_load(&fk_fault_time[device]);
    if (f <= t) {
        fk_wait_until(f);
        return (CUresult)atomic_load(&fk_fault_code[device]);
    }
    fk_wait_until(t);
    return CUDA_SUCCESS;
}

/* ---- which kernels fail ---- */

struct fk_fail {
    char *name;
    int code;
};
static struct fk_fail *fk_fails;
static size_t fk_nfails;
static pthread_mutex_t fk_fail_lock = PTHREAD_MUTEX_INITIALIZER;

static void fk_set_fail(const char *name, int code)
{
    pthread_mutex_lock(&fk_fail_lock);
    struct fk_fail *f = realloc(fk_fails, (fk_nfails + 1) * sizeof(*f));
    if (f) {
        fk_fails = f;
        fk_fails[fk_nfails].name = strdup(name);
        fk_fails[fk_nfails++].code = code;
    }
    pthread_mutex_unlock(&fk_fail_lock);
}

int fk_kernel_fault(const char *name, const char *plain)
{
    int code = 0;
    pthread_mutex_lock(&fk_fail_lock);
    for (size_t i = 0; i < fk_nfails && !code; i++)
        if (strcmp(fk_fails[i].name, name) == 0 || strcmp(fk_fails[i].name, plain) == 0)
            code = fk_fails[i].code;
    pthread_mutex_unlock(&fk_fail_lock);
    return code;
}

FK_API void fakecuda_set_kernel_fail(const char *name, int code)
{
    if (name)
        fk_set_fail(name, code ? code : CUDA_ERROR_ASSERT);
}

/* "name" or "name=assert": a device-side assert; "name=launch": an
 * unspecified launch failure; "name=address": an illegal address. */
void fk_parse_kernel_fail(void (*warn)(const char *var, const char *val, const char *def))
{
    const char *v = getenv("FAKECUDA_KERNEL_FAIL");
    if (!v || !*v)
        return;
    char *copy = strdup(v), *save = NULL;
    for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(tok, '=');
        int code = CUDA_ERROR_ASSERT;
        if (eq) {
            *eq = 0;
            if (strcmp(eq + 1, "launch") == 0)
                code = CUDA_ERROR_LAUNCH_FAILED;
            else if (strcmp(eq + 1, "address") == 0)
                code = CUDA_ERROR_ILLEGAL_ADDRESS;
            else if (strcmp(eq + 1, "assert") != 0)
                warn("FAKECUDA_KERNEL_FAIL", eq + 1, "assert");
        }
        if (*tok)
            fk_set_fail(tok, code);
    }
    free(copy);
}
