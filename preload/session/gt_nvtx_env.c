/* gt_nvtx_env.c: NVTX with LD_PRELOAD alone. NVTX's loader in the program
 * looks for its tool in NVTX_INJECTION64_PATH at the program's first NVTX
 * call, which comes after our constructor: so the shim names itself there
 * when the environment names no tool, and both `gputrace record` and
 * `LD_PRELOAD=libgputrace.so` record ranges and marks. Another tool's
 * choice is left alone, said in one line per process tree (the marker
 * variable keeps children, and `record`, which says it too, from
 * repeating it). */
#include <dlfcn.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "base/gt_base.h"
#include "session/gt_session.h"

#define GT_NVTX_VAR "NVTX_INJECTION64_PATH"
#define GT_NVTX_SAID "GPUTRACE_NVTX_OTHER_TOOL_SAID"

/* Whether two paths name one file (the shim may be reached by a link). */
static int gt_same_file(const char *a, const char *b)
{
    char ra[PATH_MAX], rb[PATH_MAX];
    if (strcmp(a, b) == 0)
        return 1;
    return realpath(a, ra) && realpath(b, rb) && strcmp(ra, rb) == 0;
}

void gt_nvtx_env_claim(void)
{
    Dl_info info;
    if (!dladdr((void *)gt_nvtx_env_claim, &info) || !info.dli_fname || info.dli_fname[0] != '/')
        return;
    /* Only when preloaded: a shim dlopen()ed into a running program would
     * change the environment under the program's threads. */
    const char *preload = getenv("LD_PRELOAD");
    const char *base = strrchr(info.dli_fname, '/') + 1;
    if (!preload || !strstr(preload, base))
        return;
    const char *off = getenv("GPUTRACE_NVTX");
    if (off && strcmp(off, "0") == 0)
        return;
    const char *set = getenv(GT_NVTX_VAR);
    if (!set || !*set) {
        /* Runs in our constructor, before the program has threads of its
         * own that could read the environment at the same time. */
        setenv(GT_NVTX_VAR, info.dli_fname, 1);
        return;
    }
    if (gt_same_file(set, info.dli_fname) || getenv(GT_NVTX_SAID))
        return;
    gt_warn(GT_NVTX_VAR " names another NVTX tool (%s); leaving it, so NVTX ranges are not recorded", set);
    setenv(GT_NVTX_SAID, "1", 1);
}
