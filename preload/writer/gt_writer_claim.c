/* gt_writer_claim.c: a trace file has one writer, and an existing trace
 * is replaced only when asked (GPUTRACE_FORCE_OVERWRITE=1, set by
 * `gputrace record --force`).
 *
 * The name is claimed by creating it with O_EXCL, and held with an flock
 * on the file for as long as the trace is written: an flock is the
 * kernel's, so it ends with the writer however the writer ends (exit,
 * SIGKILL), and it is separate from SQLite's own (POSIX) locks. A second
 * process given the same name (two runs at once, a fork child under a
 * name without %p) finds the lock held and writes beside it, saying
 * where; an earlier run's file is kept and written beside as well, unless
 * replacing was asked for. Beside means t.2.db, t.3.db... (the name an
 * exec'd image takes after its earlier image, too). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/gt_base.h"
#include "writer/gt_writer.h"
#include "writer/gt_writer_int.h"

#define GT_CLAIM_NAMES 1000 /* t.db, then t.2.db ... t.999.db */

static void gt_unlink_sides(const char *path)
{
    char side[PATH_MAX + 8];
    snprintf(side, sizeof(side), "%s-wal", path);
    unlink(side);
    snprintf(side, sizeof(side), "%s-shm", path);
    unlink(side);
}

/* Whether `fd` is still the file at `path` (not unlinked or replaced by a
 * process that claimed the name meanwhile). */
static int gt_same_file(int fd, const char *path)
{
    struct stat a, b;
    return fstat(fd, &a) == 0 && lstat(path, &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

/* The k-th name for `path` (k = 1: itself): before its extension. */
static int gt_claim_name(const char *path, int k, char *out, size_t len)
{
    if (k == 1)
        return snprintf(out, len, "%s", path) < (int)len ? 0 : -1;
    const char *slash = strrchr(path, '/'), *dot = strrchr(path, '.');
    if (!dot || (slash && dot < slash) || dot == path || dot == slash + 1)
        dot = path + strlen(path);
    int n = snprintf(out, len, "%.*s.%d%s", (int)(dot - path), path, k, dot);
    return n > 0 && (size_t)n < len ? 0 : -1;
}

enum { GT_TAKEN_LIVE, GT_TAKEN_KEPT, GT_TAKEN_IMAGE, GT_TAKEN_REPLACED, GT_TAKEN_ERROR };

/* An existing file at `name`: is someone writing it, and if not, may it
 * be replaced (and is it, now)? */
static int gt_claim_taken(const char *name, int force, char *err, size_t err_len)
{
    struct stat st;
    if (lstat(name, &st) != 0)
        return GT_TAKEN_REPLACED; /* gone meanwhile: try again */
    if (S_ISLNK(st.st_mode)) {
        snprintf(err, err_len, "%s is a symbolic link; refusing to write through it", name);
        return GT_TAKEN_ERROR;
    }
    if (!S_ISREG(st.st_mode)) {
        snprintf(err, err_len, "%s exists and is not a regular file", name);
        return GT_TAKEN_ERROR;
    }
    int fd = open(name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0)
        return errno == ENOENT ? GT_TAKEN_REPLACED : GT_TAKEN_KEPT;
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        close(fd);
        return GT_TAKEN_LIVE;
    }
    /* Not written by anyone: an earlier run's trace, or this process's
     * own from before an exec (kept, whatever was asked). */
    int rc;
    if (gt_writer_is_earlier_image(name))
        rc = GT_TAKEN_IMAGE;
    else if (!force)
        rc = GT_TAKEN_KEPT;
    else if (!gt_same_file(fd, name))
        rc = GT_TAKEN_REPLACED; /* replaced by another meanwhile: look again */
    else if (unlink(name) != 0) {
        snprintf(err, err_len, "cannot replace %s: %s", name, strerror(errno));
        rc = GT_TAKEN_ERROR;
    } else {
        gt_unlink_sides(name); /* its stale log would be replayed into the new trace */
        rc = GT_TAKEN_REPLACED;
    }
    close(fd); /* the lock goes with it, after the unlink */
    return rc;
}

int gt_writer_claim_file(char *path, size_t path_len, int force, char *err, size_t err_len)
{
    char asked[PATH_MAX], name[PATH_MAX];
    snprintf(asked, sizeof(asked), "%s", path);
    int why = -1; /* why the name asked for was not it: GT_TAKEN_LIVE or _KEPT */
    for (int k = 1, tries = 0; k < GT_CLAIM_NAMES && tries < 64; tries++) {
        if (gt_claim_name(asked, k, name, sizeof(name)) < 0 || strlen(name) >= path_len) {
            snprintf(err, err_len, "cannot create %s: the name is too long", asked);
            return -1;
        }
        int fd = open(name, O_CREAT | O_EXCL | O_RDWR | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd >= 0) {
            /* Ours unless a process replacing the name holds its lock, or
             * has unlinked it already: then look again. */
            if (flock(fd, LOCK_EX | LOCK_NB) != 0 || !gt_same_file(fd, name)) {
                close(fd);
                continue;
            }
            gt_unlink_sides(name); /* a stale log left beside a deleted trace */
            memcpy(path, name, strlen(name) + 1);
            if (why == GT_TAKEN_LIVE)
                gt_warn("%s is being written by another process; this process writes %s", asked, name);
            else if (why == GT_TAKEN_KEPT)
                gt_warn("%s exists; this process writes %s (GPUTRACE_FORCE_OVERWRITE=1 or gputrace record "
                        "--force replaces it)", asked, name);
            return fd;
        }
        if (errno != EEXIST) {
            snprintf(err, err_len, "cannot create %s: %s", name, strerror(errno));
            return -1;
        }
        int taken = gt_claim_taken(name, force, err, err_len);
        if (taken == GT_TAKEN_ERROR && k == 1)
            return -1;
        if (taken == GT_TAKEN_REPLACED)
            continue;
        if (k == 1 && taken != GT_TAKEN_IMAGE)
            why = taken;
        k++;
    }
    snprintf(err, err_len, "cannot create %s: no free name beside it", asked);
    return -1;
}
