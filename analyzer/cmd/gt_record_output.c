/* gt_record_output.c: the output location checked before the command
 * runs (gt_record_output.h). */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/gt_err.h"
#include "cmd/gt_record_output.h"
#include "preload/base/gt_config.h" /* the shim's own expansion, shared */

static const char *gt_env(const char *name)
{
    return getenv(name);
}

/* Whether `s` holds %c (not %%c) for one of `which`. */
static int gt_has_seq(const char *s, const char *which)
{
    for (; *s; s++) {
        if (s[0] != '%' || !s[1])
            continue;
        if (strchr(which, s[1]))
            return 1;
        s++; /* %% and the others */
    }
    return 0;
}

int gt_record_check_output(const char *pattern, const char *command, int per_window, int force)
{
    char pat[PATH_MAX + 16], path[PATH_MAX + 64], err[256], host[256];
    if (!per_window || gt_output_per_window(pattern, pat, sizeof(pat)) < 0)
        snprintf(pat, sizeof(pat), "%s", pattern);
    if (gethostname(host, sizeof(host)) != 0)
        host[0] = 0;
    host[sizeof(host) - 1] = 0;
    const char *slash = strrchr(command, '/');
    struct gt_path_vars pv = {(long)getpid(), slash ? slash + 1 : command, host, gt_rank_from_env(gt_env), 1};
    if (gt_expand_output(pat, &pv, path, sizeof(path), err, sizeof(err)) < 0)
        return 0; /* the pattern's own check says what is wrong with it */
    /* The directory, unless its name hangs on the traced process (the
     * expansions never hold a '/', so the last one is the pattern's). */
    const char *pslash = strrchr(pat, '/');
    char dir[PATH_MAX + 64] = "";
    if (!pslash)
        snprintf(dir, sizeof(dir), ".");
    else {
        char head[PATH_MAX + 16];
        snprintf(head, sizeof(head), "%.*s", (int)(pslash - pat), pat);
        if (!gt_has_seq(head, "pnr")) {
            const char *dslash = strrchr(path, '/');
            snprintf(dir, sizeof(dir), "%.*s", dslash == path ? 1 : (int)(dslash - path), path);
        }
    }
    struct stat st;
    if (dir[0]) {
        if (stat(dir, &st) != 0) {
            gt_err("record: cannot write the trace %s: directory %s: %s", path, dir, strerror(errno));
            return -1;
        }
        if (!S_ISDIR(st.st_mode)) {
            gt_err("record: cannot write the trace %s: %s is not a directory", path, dir);
            return -1;
        }
        /* A file made and removed: permissions alone miss a read-only
         * mount, or /proc for root. */
        char probe[PATH_MAX + 96];
        snprintf(probe, sizeof(probe), "%s/.gputrace-record-XXXXXX", dir);
        int fd = mkstemp(probe);
        if (fd < 0) {
            gt_err("record: cannot write the trace %s: directory %s: %s", path, dir, strerror(errno));
            return -1;
        }
        close(fd);
        unlink(probe);
    }
    if (gt_has_seq(pat, "pnr"))
        return 0;
    if (lstat(path, &st) != 0)
        return 0;
    if (S_ISLNK(st.st_mode)) {
        gt_err("record: %s is a symbolic link; traces are never written through one", path);
        return -1;
    }
    if (!S_ISREG(st.st_mode)) {
        gt_err("record: %s exists and is not a regular file", path);
        return -1;
    }
    if (!force) {
        gt_err("record: %s exists; --force replaces it (or give -o another name)", path);
        return -1;
    }
    return 0;
}
