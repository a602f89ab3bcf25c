/* fk_procaddr.c: cuGetProcAddress, from one table of entry points
 * (fk_procaddr.def): the API name a caller asks for, the function for it,
 * and its per-thread default stream variant.
 *
 * This file does not include cuda.h: the table only takes addresses, so
 * each entry point is declared here by name alone. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FK_API __attribute__((visibility("default")))

typedef int fk_result;                          /* CUresult */
#define FK_SUCCESS 0
#define FK_ERROR_INVALID_VALUE 1
#define FK_ERROR_NOT_FOUND 500
#define FK_PER_THREAD_DEFAULT_STREAM (1ull << 1) /* CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM */
#define FK_SYMBOL_SUCCESS 0                     /* CU_GET_PROC_ADDRESS_SUCCESS */
#define FK_SYMBOL_NOT_FOUND 1                   /* CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND */

#define FK_ENTRY(api, fn) extern void fn(void);
#define FK_ENTRY_PT(api, fn, pt) extern void fn(void); extern void pt(void);
#define FK_ENTRY_SINCE(api, version, fn) extern void fn(void);
#include "fk_procaddr.def"
#undef FK_ENTRY
#undef FK_ENTRY_PT
#undef FK_ENTRY_SINCE

struct fk_entry {
    const char *api;
    void (*fn)(void);
    void (*pt)(void);
    int since; /* the CUDA version (cuGetProcAddress's) this entry is given from */
};

#define FK_ENTRY(api, fn) {#api, fn, NULL, 0},
#define FK_ENTRY_PT(api, fn, pt) {#api, fn, pt, 0},
#define FK_ENTRY_SINCE(api, version, fn) {#api, fn, NULL, version},
FK_API fk_result cuGetProcAddress_v2(const char *symbol, void **pfn, int version, uint64_t flags, int *status);

static const struct fk_entry fk_table[] = {
#include "fk_procaddr.def"
    /* a caller may ask for the lookup function itself */
    {"cuGetProcAddress", (void (*)(void))cuGetProcAddress_v2, NULL, 0},
};
#undef FK_ENTRY
#undef FK_ENTRY_PT
#undef FK_ENTRY_SINCE

/* The first entry of the name given at `version`: a name's newer entries
 * come first in fk_procaddr.def (FK_ENTRY_SINCE), as the driver gives the
 * function of the version the caller was built for. */
static fk_result fk_proc(const char *symbol, void **pfn, int version, uint64_t flags, int *status)
{
    if (!symbol || !pfn)
        return FK_ERROR_INVALID_VALUE;
    for (size_t i = 0; i < sizeof(fk_table) / sizeof(fk_table[0]); i++) {
        if (strcmp(fk_table[i].api, symbol) != 0 || version < fk_table[i].since)
            continue;
        void (*f)(void) = fk_table[i].fn;
        if ((flags & FK_PER_THREAD_DEFAULT_STREAM) && fk_table[i].pt)
            f = fk_table[i].pt;
        *pfn = (void *)f;
        if (status)
            *status = FK_SYMBOL_SUCCESS;
        return FK_SUCCESS;
    }
    /* FAKECUDA_EXPORT_LOG=1 or FAKECUDA_STUB_LOG=1: which driver function a
     * runtime wanted and the simulated driver lacks (fk_export.c names the
     * private tables) */
    const char *elog = getenv("FAKECUDA_EXPORT_LOG"), *slog = getenv("FAKECUDA_STUB_LOG");
    if ((elog && *elog == '1') || (slog && *slog == '1'))
        fprintf(stderr, "fakecuda: cuGetProcAddress(\"%s\"): not simulated (CUDA_ERROR_NOT_FOUND)\n", symbol);
    *pfn = NULL;
    if (status)
        *status = FK_SYMBOL_NOT_FOUND;
    return FK_ERROR_NOT_FOUND;
}

FK_API fk_result cuGetProcAddress_v2(const char *symbol, void **pfn, int version, uint64_t flags, int *status)
{
    return fk_proc(symbol, pfn, version, flags, status);
}

FK_API fk_result cuGetProcAddress(const char *symbol, void **pfn, int version, uint64_t flags);
FK_API fk_result cuGetProcAddress(const char *symbol, void **pfn, int version, uint64_t flags)
{
    return fk_proc(symbol, pfn, version, flags, NULL);
}
