/* fk_stubs.c: every driver function NVIDIA's cuda.h declares (the list in
 * fk_stubs.def, generated from it by runtime/gen_stubs.py) is exported, so
 * that a program linked against the real headers never stops at an
 * unresolved symbol. Those the simulated driver implements are defined
 * elsewhere and replace these weak ones at link time; the rest answer
 * CUDA_ERROR_NOT_SUPPORTED.
 *
 * This file does not include cuda.h: each stub takes any arguments (the C
 * calling convention lets a function ignore them). */
#define FK_API __attribute__((visibility("default")))

enum { FK_ERROR_NOT_SUPPORTED = 801 }; /* CUDA_ERROR_NOT_SUPPORTED */

/* FAKECUDA_STUB_LOG=1: one stderr line per call of a function not simulated,
 * to find what a new client needs. */
#include <stdio.h>
#include <stdlib.h>
static void fk_stub_called(const char *name)
{
    const char *v = getenv("FAKECUDA_STUB_LOG");
    if (v && *v == '1')
        fprintf(stderr, "fakecuda: %s is not simulated (CUDA_ERROR_NOT_SUPPORTED)\n", name);
}

#define FK_STUB(name)                                            \
    FK_API __attribute__((weak)) int name(void);                 \
    FK_API __attribute__((weak)) int name(void) { fk_stub_called(#name); return FK_ERROR_NOT_SUPPORTED; }
#include "fk_stubs.def"
