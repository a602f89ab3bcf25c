/* gt_symbols.h: instruction pointers to module, offset and function name,
 * on the writer thread, once per unique frame. */
#ifndef GT_SYMBOLS_H
#define GT_SYMBOLS_H

#include <stddef.h>
#include <stdint.h>

/* Resolves ip to the file of its module, its offset from the module's load
 * base, and the demangled function containing it ("" when unknown).
 * Returns 0, or -1 if no loaded module contains ip. May allocate. */
int gt_symbolize(uintptr_t ip, char *module, size_t module_len, uint64_t *offset, char *func, size_t func_len);
/* The same for a stack frame's return address: what is named, and whose
 * offset is given, is the call instruction before it (ret - 1), so that
 * `addr2line -e MODULE OFFSET` names the line that made the call. */
int gt_symbolize_return(uintptr_t ret, char *module, size_t module_len, uint64_t *offset, char *func,
                        size_t func_len);
/* Itanium C++ demangling when libstdc++ is at hand; the name unchanged else. */
void gt_demangle(const char *name, char *out, size_t out_len);
/* Drops the per-module symbol tables. */
void gt_symbols_reset(void);

#endif
