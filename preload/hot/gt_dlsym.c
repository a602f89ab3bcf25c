/* gt_dlsym.c: dlsym, wrapped, so that a CUDA entry point looked up by name
 * on a library handle (Triton's launcher, ctypes, the CUDA runtime finding
 * cuGetProcAddress, a statically linked runtime) comes back as our wrapper.
 *
 * Every other lookup must behave exactly as before. RTLD_NEXT is the hard
 * one: glibc resolves it relative to the code that called dlsym, which it
 * finds from its return address. So for RTLD_NEXT the entry point below
 * jumps (not calls) to the real dlsym: the caller's return address is still
 * on top of the stack and glibc sees the true caller. */
#include <dlfcn.h>
#include <stdatomic.h>
#include <string.h>

#include <errno.h>

#include "base/gt_base.h"
#include "hot/gt_hooks.h"

/* Sanitizer runtimes look their interceptors up with dlsym while they
 * start, before they can run instrumented code: this file's code must not
 * be instrumented. */
#define GT_NO_SANITIZE __attribute__((no_sanitize("address", "thread", "undefined")))

void *gt_real_dlsym;
void *gt_resolve_real_dlsym(void) GT_NO_SANITIZE;
void *gt_dlsym_handle(void *handle, const char *name) GT_NO_SANITIZE;

/* x86-64 System V: rdi = handle, rsi = name. */
__asm__(".text\n"
        ".globl dlsym\n"
        ".type dlsym, @function\n"
        "dlsym:\n"
        "    cmpq $-1, %rdi\n"               /* RTLD_NEXT */
        "    jne gt_dlsym_handle\n"          /* a tail jump: same arguments */
        "    movq gt_real_dlsym(%rip), %rax\n"
        "    testq %rax, %rax\n"
        "    jnz 1f\n"
        "    pushq %rdi\n"
        "    pushq %rsi\n"
        "    subq $8, %rsp\n"                /* 16-byte aligned for the call */
        "    call gt_resolve_real_dlsym\n"
        "    addq $8, %rsp\n"
        "    popq %rsi\n"
        "    popq %rdi\n"
        "1:  jmp *%rax\n"
        ".size dlsym, .-dlsym\n");

/* Before our constructor has run (another library's constructor may look
 * things up first), the real dlsym is found on first use. */
void *gt_resolve_real_dlsym(void)
{
    void *p = __atomic_load_n(&gt_real_dlsym, __ATOMIC_ACQUIRE);
    if (p)
        return p;
    p = dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.34");
    if (!p)
        p = dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.2.5");
    __atomic_store_n(&gt_real_dlsym, p, __ATOMIC_RELEASE);
    return p;
}

GT_NO_SANITIZE static int gt_hook_index(const char *name)
{
    for (uint32_t i = 0; i < GT_API_COUNT; i++)
        if (strcmp(gt_hooks[i].name, name) == 0)
            return (int)i;
    return -1;
}

void *gt_dlsym_handle(void *handle, const char *name)
{
    typedef void *(*dlsym_fn)(void *, const char *);
    dlsym_fn real = (dlsym_fn)gt_resolve_real_dlsym();
    if (!real)
        return NULL;
    void *p = real(handle, name);
    /* The tracer's own lookups, and anything not found, pass through. */
    if (!p || !name || gt_tls_busy || (strncmp(name, "cu", 2) != 0 && strncmp(name, "__cuda", 6) != 0))
        return p;
    int api = gt_hook_index(name);
    if (api < 0)
        return p;
    int saved = errno;
    void *wrapped = gt_wrap_lookup((uint32_t)api, p);
    errno = saved;
    return wrapped;
}
