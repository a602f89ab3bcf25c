/* Symbolization from ELF symbol tables, without LD_PRELOAD: static
 * functions of a binary built without -rdynamic are named, libc's are,
 * offsets are relative to the load base, C++ names are demangled. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "writer/gt_symbols.h"
#include "unit.h"

__attribute__((noinline)) static uintptr_t static_helper(void)
{
    uintptr_t ip = (uintptr_t)__builtin_return_address(0);
    __asm__ volatile("" ::: "memory");
    return ip;
}

__attribute__((noinline)) static void calls_helper(uintptr_t *ip)
{
    *ip = static_helper();
    __asm__ volatile("" ::: "memory");
}

static int ends_with(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && strcmp(s + a - b, suffix) == 0;
}

int main(void)
{
    char mod[4096], fn[1024];
    uint64_t off = 0;

    CHECK(gt_symbolize((uintptr_t)static_helper + 4, mod, sizeof(mod), &off, fn, sizeof(fn)) == 0);
    CHECK_STR(fn, "static_helper");
    CHECK(ends_with(mod, "/test_symbols"));

    /* a return address inside calls_helper, as the shim sees callers */
    uintptr_t ret;
    calls_helper(&ret);
    CHECK(gt_symbolize(ret - 1, mod, sizeof(mod), &off, fn, sizeof(fn)) == 0);
    CHECK_STR(fn, "calls_helper");
    CHECK(off > 0 && off < ret);
    /* a frame is its call instruction's: the byte before the return
     * address, relative to the same load base as any other address */
    uint64_t base_off = 0, ret_off = 0;
    CHECK(gt_symbolize((uintptr_t)static_helper, mod, sizeof(mod), &base_off, fn, sizeof(fn)) == 0);
    uintptr_t base = (uintptr_t)static_helper - base_off;
    CHECK(gt_symbolize_return(ret, mod, sizeof(mod), &ret_off, fn, sizeof(fn)) == 0);
    CHECK_STR(fn, "calls_helper");
    CHECK(ret_off == ret - 1 - base);
    CHECK(ends_with(mod, "/test_symbols"));

    /* getpid: in libc, and not intercepted by the sanitizers this runs under */
    pid_t (*volatile libc_fn)(void) = getpid;
    CHECK(gt_symbolize((uintptr_t)libc_fn + 1, mod, sizeof(mod), &off, fn, sizeof(fn)) == 0);
    CHECK(strstr(mod, "libc.so") != NULL);
    CHECK(strstr(fn, "getpid") != NULL);

    CHECK(gt_symbolize(0x10, mod, sizeof(mod), &off, fn, sizeof(fn)) == -1);

    gt_demangle("_Z10big_kernelPfi", fn, sizeof(fn));
    CHECK_STR(fn, "big_kernel(float*, int)");
    gt_demangle("_ZN2ns3fooEv", fn, sizeof(fn));
    CHECK_STR(fn, "ns::foo()");
    gt_demangle("plain_c_kernel", fn, sizeof(fn));
    CHECK_STR(fn, "plain_c_kernel");
    gt_demangle("_Znot-a-name", fn, sizeof(fn));
    CHECK_STR(fn, "_Znot-a-name");
    char small[8];
    gt_demangle("_Z10big_kernelPfi", small, sizeof(small));
    CHECK_STR(small, "big_ker");

    gt_symbols_reset();
    CHECK(gt_symbolize((uintptr_t)static_helper + 4, mod, sizeof(mod), &off, fn, sizeof(fn)) == 0);
    CHECK_STR(fn, "static_helper");
    return unit_report("test_symbols");
}
