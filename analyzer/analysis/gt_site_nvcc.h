/* gt_site_nvcc.h: nvcc's launch plumbing in the user's own binary, told by
 * what each frame is, never by where it sits in the stack. */
#ifndef GT_SITE_NVCC_H
#define GT_SITE_NVCC_H

#include <sqlite3.h>
#include <stddef.h>

/* The names of the kernels the trace's launches launched: each is also the
 * name of nvcc's host-side wrapper of that kernel (a function the program
 * cannot have under that name). */
struct gt_nvcc {
    char **full;   /* "k(float*)", "k_tmpl<4>(float*)": demangled, without "void " */
    char **bare;   /* the same without the parameter list: "k", "k_tmpl<4>" */
    size_t n;
};

/* Reads the kernel names; a trace without them reads as none (never fails
 * but for memory: -1). */
int gt_nvcc_init(struct gt_nvcc *n, sqlite3 *db, int schema_version);
void gt_nvcc_free(struct gt_nvcc *n);
/* 1 when a frame of function `fn` (demangled, may be NULL) in source file
 * `file` (may be NULL) is nvcc's plumbing: its stub, a kernel's host
 * wrapper, the runtime header's launch templates (docs/report.md). */
int gt_nvcc_is_plumbing(const struct gt_nvcc *n, const char *fn, const char *file);

#endif
