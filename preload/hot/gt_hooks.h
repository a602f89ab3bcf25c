/* gt_hooks.h: the hook table as data: one entry per wrapped entry point. */
#ifndef GT_HOOKS_H
#define GT_HOOKS_H

#include <stdint.h>

enum gt_lib { GT_LIB_RT, GT_LIB_DRV, GT_LIB_CUPTI };

struct gt_hook_info {
    const char *name;
    int lib;       /* enum gt_lib (CUPTI: the program's own use, never recorded) */
    int category;  /* enum gt_category */
    void *wrapper; /* our exported function */
};

enum gt_api_id {
#define GT_HOOK(lib, name, cat, params, args, reader) GT_API_##name,
#define GT_HOOK_VOID GT_HOOK
#include "hot/gt_hooks.def"
#undef GT_HOOK
#undef GT_HOOK_VOID
    GT_API_COUNT
};

extern const struct gt_hook_info gt_hooks[GT_API_COUNT];

/* The real function behind hook `api`, resolved once. NULL if not found. */
void *gt_real(uint32_t api);

/* What a by-name lookup of hook `api` should hand out, given the function
 * `found` there: our wrapper when `found` is the real function the wrapper
 * calls (adopting it as that if none was resolved yet), else `found`. */
void *gt_wrap_lookup(uint32_t api, void *found);

/* Our wrapper for a real driver function pointer, or the pointer itself. */
void *gt_wrap_driver_pointer(void *real);

#endif
