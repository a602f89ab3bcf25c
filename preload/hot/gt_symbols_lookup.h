/* gt_symbols_lookup.h: finding a CUDA library function by name wherever the
 * library was loaded (globally or with RTLD_LOCAL). */
#ifndef GT_SYMBOLS_LOOKUP_H
#define GT_SYMBOLS_LOOKUP_H

void *gt_lookup_symbol(const char *name);

#endif
