/* gt_sampler_tasks.c: the process's threads, listed again only when the
 * list may have changed (gt_sampler_tasks.h).
 *
 * Reading /proc/self/task costs the kernel a lookup and a name for each
 * thread: with 16 threads, a fifth to a third of a sampling round (10 to
 * 20 us on the development VM). The directory's link count is the number
 * of threads plus two (procfs counts them at each stat), one fstat away;
 * so the list is read again when that count moved, when a round found a
 * listed thread gone (one that ended and one that began between two
 * rounds leave the count as it was, and the one that ended is found gone
 * when next sampled, so the new one waits at most one round), and once a
 * second whatever the count says. */
#include <dirent.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "hot/gt_threads.h"
#include "sampler/gt_sampler_tasks.h"

#define GT_STASKS_MAX GT_THREADS_MAX
/* rounds between two readings whatever the count says (1 s at 100 Hz) */
#define GT_STASKS_EVERY 100u

static struct {
    int fd; /* /proc/self/task, open; -1: not yet (a fork child opens its own) */
    uint32_t tids[GT_STASKS_MAX];
    size_t n;
    nlink_t nlink;
    unsigned since;
    int changed;
} gt_st = {.fd = -1, .changed = 1};

/* Reads the directory from its start, with getdents64 (no allocation). */
static size_t gt_stasks_read(void)
{
    if (lseek(gt_st.fd, 0, SEEK_SET) != 0)
        return 0;
    size_t n = 0;
    char buf[4096];
    for (;;) {
        long got = syscall(SYS_getdents64, gt_st.fd, buf, sizeof(buf));
        if (got <= 0)
            break;
        for (long off = 0; off < got;) {
            struct dirent64 *d = (struct dirent64 *)(buf + off);
            off += d->d_reclen;
            char *end;
            unsigned long tid = strtoul(d->d_name, &end, 10);
            if (*end || !tid || n == GT_STASKS_MAX)
                continue;
            gt_st.tids[n++] = (uint32_t)tid;
        }
    }
    return n;
}

size_t gt_stasks_list(uint32_t *tids, size_t max)
{
    if (gt_st.fd < 0) {
        gt_st.fd = open("/proc/self/task", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        gt_st.changed = 1;
        if (gt_st.fd < 0)
            return 0;
    }
    struct stat st;
    nlink_t nlink = fstat(gt_st.fd, &st) == 0 ? st.st_nlink : 0;
    if (!nlink || nlink != gt_st.nlink)
        gt_st.changed = 1;
    if (gt_st.changed || ++gt_st.since >= GT_STASKS_EVERY) {
        gt_st.n = gt_stasks_read();
        gt_st.nlink = nlink;
        gt_st.since = 0;
        gt_st.changed = 0;
        /* a process has one thread at least (this one): none read, the
         * directory failed, and is opened afresh next round */
        if (!gt_st.n) {
            close(gt_st.fd);
            gt_st.fd = -1;
        }
    }
    size_t n = gt_st.n < max ? gt_st.n : max;
    memcpy(tids, gt_st.tids, n * sizeof(*tids));
    return n;
}

void gt_stasks_changed(void)
{
    gt_st.changed = 1;
}

void gt_stasks_close(void)
{
    if (gt_st.fd >= 0)
        close(gt_st.fd);
    gt_st.fd = -1;
    gt_st.n = 0;
    gt_st.changed = 1;
}
