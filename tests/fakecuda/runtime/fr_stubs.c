/* fr_stubs.c: every runtime function NVIDIA's header declares (the list in
 * fr_stubs.def, generated from it) is exported, so that a program built
 * with -cudart shared never stops at an unresolved symbol. Those the
 * simulated runtime implements are defined elsewhere and replace these weak
 * ones at link time; the rest answer cudaErrorNotSupported, and it becomes
 * the thread's last error, as a failed call's does.
 *
 * This file does not include cuda_runtime_api.h: each stub takes any
 * arguments (the C calling convention lets a function ignore them). */
#define FR_API __attribute__((visibility("default")))

enum { FR_ERROR_NOT_SUPPORTED = 801 }; /* cudaErrorNotSupported */
int fr_set_error(int e);               /* fr_driver.c (cudaError_t is an int-sized enum) */

/* FAKECUDA_STUB_LOG=1: one stderr line per call of a function not simulated,
 * to find what a new client needs. */
#include <stdio.h>
#include <stdlib.h>
static void fr_stub_called(const char *name)
{
    const char *v = getenv("FAKECUDA_STUB_LOG");
    if (v && *v == '1')
        fprintf(stderr, "fakecuda: %s is not simulated (cudaErrorNotSupported)\n", name);
}

#define FR_STUB(name)                                           \
    FR_API __attribute__((weak)) int name(void);                \
    FR_API __attribute__((weak)) int name(void) { fr_stub_called(#name); return fr_set_error(FR_ERROR_NOT_SUPPORTED); }
#include "fr_stubs.def"
