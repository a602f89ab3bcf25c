/* procaddr_probe: whose function cuGetProcAddress hands out when a
 * preloaded library (tests/progs/next/cu_interposer.c, or the tracer)
 * defines the same name. NVIDIA's libcuda.so.1 is linked -Bsymbolic: it
 * hands out its own, whatever is preloaded (seen on an H100's driver 580,
 * docs/validation.md). Prints, for each name, "NAME own" when the function
 * lies in libcuda.so.1, else "NAME FILE". Loads the driver as the runtime
 * does (dlopen, RTLD_LOCAL), so no symbol of it is global. */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

typedef int (*get_proc_t)(const char *, void **, int, unsigned long long, int *);

int main(void)
{
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h)
        return 2;
    int (*init)(unsigned) = (int (*)(unsigned))dlsym(h, "cuInit");
    get_proc_t get = (get_proc_t)dlsym(h, "cuGetProcAddress_v2");
    if (!init || !get || init(0) != 0)
        return 2;
    const char *names[] = {"cuLaunchKernel", "cuMemAlloc", "cuCtxSynchronize"};
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        void *p = NULL;
        int st = -1;
        Dl_info di = {0};
        if (get(names[i], &p, 13000, 0, &st) != 0 || !p || !dladdr(p, &di) || !di.dli_fname)
            return 2;
        const char *base = strrchr(di.dli_fname, '/');
        base = base ? base + 1 : di.dli_fname;
        printf("%s %s\n", names[i], strcmp(base, "libcuda.so.1") == 0 ? "own" : base);
    }
    return 0;
}
