/* gt_names.h: kernel names, interned once per kernel handle. */
#ifndef GT_NAMES_H
#define GT_NAMES_H

#include <stdint.h>

enum gt_name_src {
    GT_NAME_HOSTFUN,    /* host-side stub address (cudaLaunchKernel) */
    GT_NAME_RT_KERNEL,  /* cudaKernel_t (__cudaLaunchKernel) */
    GT_NAME_DRV_FUNC    /* CUfunction or CUkernel (cuLaunchKernel) */
};

/* Name id for a kernel handle, 0 when it cannot be named. Lock-free after
 * the first launch of each kernel. */
uint32_t gt_names_lookup(const void *handle, int src);
/* The name id of a handle already named (a launch that took it, a
 * registration, cuModuleGetFunction), without asking CUDA: a handle a
 * call refused may be no handle at all. 0: none known. */
uint32_t gt_names_known(const void *handle);
/* Ties a handle to a name the caller may free once this returns (the
 * name cuModuleGetFunction was asked for): interned now. */
void gt_names_register_copy(const void *handle, const char *name);
/* Ties a handle to a name seen at registration. */
void gt_names_register(const void *handle, const char *name);
/* Ties a handle to the name of another, already known handle. */
void gt_names_alias(const void *handle, const void *known);
/* The mangled name for an id; NULL if none. */
const char *gt_names_get(uint32_t id);

void gt_names_fork_lock(void);
void gt_names_fork_unlock(void);

#endif
