/* fk_collective.c: collectives across the processes of a simulated job.
 * A kernel named as NCCL's (ncclDevKernel_..., ncclKernel_...) launched in
 * a process whose environment names a job (FAKECUDA_JOB, FAKECUDA_RANK,
 * FAKECUDA_WORLD_SIZE) starts when its stream reaches it (its "arrival"),
 * and ends only once every rank has launched its collective of the same
 * ordinal: at the latest arrival plus its own duration (FAKECUDA_KERNEL_NS).
 * So an early rank's collective takes longer by the time it waits for its
 * peers, as on a real cluster.
 *
 * Ranks meet in POSIX shared memory (/dev/shm/fakecuda-JOB): each rank
 * publishes its pid and the GPU arrival time of each of its collectives
 * (CLOCK_MONOTONIC, one clock for every process on the host). The end of a
 * collective is not known when it is launched, so the launch returns at
 * once and the collective stays pending; the first thing that needs the
 * end (a later submission, a sync, a query, an event record, a flush of
 * activity records) waits on the host until every peer has arrived. A
 * peer that has died (its pid is gone) is not waited for; a peer that
 * never arrives is waited for at most FAKECUDA_COLLECTIVE_TIMEOUT_MS
 * (default 30000), after which this process stops waiting for that peer
 * and says so on stderr once. Either way the collective then ends at the
 * latest arrival of the peers that came, plus its duration.
 *
 * FAKECUDA_COLLECTIVE_SOLO names (comma-separated shell wildcards)
 * collectives on a communicator of this rank alone (NCCL allows one: a
 * split of the world where a rank is alone in its group): they meet no
 * peer and take no place in the job's order, so a rank can launch one
 * its peers do not without shifting the collectives that follow. */
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "fk_driver.h"

#define FK_COLL_MAX_RANKS 1024
#define FK_COLL_RING 256 /* a rank is never more than a few collectives ahead of the slowest */

struct fk_coll_rank {
    _Atomic uint64_t pid;
    _Atomic uint64_t count; /* collectives published */
    _Atomic uint64_t arrival[FK_COLL_RING];
};

struct fk_coll_shm {
    _Atomic uint64_t exited;
    struct fk_coll_rank rank[FK_COLL_MAX_RANKS];
};

static pthread_once_t fk_coll_once = PTHREAD_ONCE_INIT;
static struct fk_coll_shm *fk_coll_map;
static char fk_coll_name[128];
static int fk_coll_rank_id, fk_coll_world;
static uint64_t fk_coll_timeout_ns;
static char fk_coll_lost[FK_COLL_MAX_RANKS]; /* peers seen dead or timed out: not waited for again */

/* The one collective launched and not yet ended (every submission waits
 * for it first, so there is at most one). */
static pthread_mutex_t fk_coll_mu = PTHREAD_MUTEX_INITIALIZER;
static struct {
    int set;
    struct CUstream_st *s;
    struct fk_node n;
    uint32_t corr;
    uint64_t ordinal, start, dur;
} fk_coll_pending;
static uint64_t fk_coll_next;
static __thread int fk_coll_inside; /* this thread holds fk_coll_mu */

static long fk_coll_env(const char *a, const char *b, long def)
{
    const char *v = getenv(a);
    if ((!v || !*v) && b)
        v = getenv(b);
    if (!v || !*v)
        return def;
    char *end;
    long x = strtol(v, &end, 10);
    return *end ? def : x;
}

static void fk_coll_exit(void)
{
    if (!fk_coll_map)
        return;
    /* the last rank to exit removes the segment; a rank that crashed leaves it */
    if (atomic_fetch_add(&fk_coll_map->exited, 1) + 1 == (uint64_t)fk_coll_world)
        shm_unlink(fk_coll_name);
}

static void fk_coll_init(void)
{
    const char *job = getenv("FAKECUDA_JOB");
    if (!job || !*job)
        return;
    fk_coll_world = (int)fk_coll_env("FAKECUDA_WORLD_SIZE", "WORLD_SIZE", 0);
    fk_coll_rank_id = (int)fk_coll_env("FAKECUDA_RANK", "RANK", -1);
    fk_coll_timeout_ns = (uint64_t)fk_coll_env("FAKECUDA_COLLECTIVE_TIMEOUT_MS", NULL, 30000) * 1000000ull;
    if (fk_coll_world < 2 || fk_coll_world > FK_COLL_MAX_RANKS || fk_coll_rank_id < 0 ||
        fk_coll_rank_id >= fk_coll_world) {
        fprintf(stderr, "fakecuda: FAKECUDA_JOB set but rank %d of world %d is not valid (at most %d ranks); "
                        "collectives run alone\n", fk_coll_rank_id, fk_coll_world, FK_COLL_MAX_RANKS);
        return;
    }
    snprintf(fk_coll_name, sizeof(fk_coll_name), "/fakecuda-%.100s", job);
    for (char *p = fk_coll_name + 1; *p; p++)
        if (*p == '/')
            *p = '_';
    int fd = shm_open(fk_coll_name, O_RDWR | O_CREAT, 0600);
    if (fd < 0 || ftruncate(fd, sizeof(struct fk_coll_shm)) != 0) {
        fprintf(stderr, "fakecuda: cannot open shared memory %s: %s; collectives run alone\n", fk_coll_name,
                strerror(errno));
        if (fd >= 0)
            close(fd);
        return;
    }
    void *m = mmap(NULL, sizeof(struct fk_coll_shm), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (m == MAP_FAILED)
        return;
    fk_coll_map = m;
    atomic_store(&fk_coll_map->rank[fk_coll_rank_id].pid, (uint64_t)getpid());
    atexit(fk_coll_exit);
}

/* A collective of a communicator of this rank alone (FAKECUDA_COLLECTIVE_SOLO)? */
static int fk_coll_solo(const char *name)
{
    const char *v = getenv("FAKECUDA_COLLECTIVE_SOLO");
    char buf[1024];
    if (!v || !*v || strlen(v) >= sizeof(buf))
        return 0;
    memcpy(buf, v, strlen(v) + 1);
    for (char *save = NULL, *p = strtok_r(buf, ",", &save); p; p = strtok_r(NULL, ",", &save))
        if (fnmatch(p, name, 0) == 0)
            return 1;
    return 0;
}

int fk_coll_is(const struct CUfunc_st *f)
{
    if (!f || !f->name || (!strstr(f->name, "ncclDevKernel_") && !strstr(f->name, "ncclKernel_")))
        return 0;
    if (fk_coll_solo(f->name))
        return 0; /* runs as any kernel: its own duration, no peer */
    pthread_once(&fk_coll_once, fk_coll_init);
    return fk_coll_map != NULL;
}

/* Gone, or a zombie its launcher has not reaped yet. */
static int fk_coll_dead(uint64_t pid)
{
    if (!pid)
        return 0;
    if (kill((pid_t)pid, 0) != 0 && errno == ESRCH)
        return 1;
    char path[64], buf[256];
    snprintf(path, sizeof(path), "/proc/%llu/stat", (unsigned long long)pid);
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        return 0;
    ssize_t n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    if (n <= 0)
        return 0;
    buf[n] = 0;
    const char *paren = strrchr(buf, ')');
    return paren && paren[1] == ' ' && (paren[2] == 'Z' || paren[2] == 'X');
}

/* The latest arrival at collective k over the peers that get there (or
 * `mine` when every other one is gone). Waits on the host. */
static uint64_t fk_coll_latest(uint64_t k, uint64_t mine)
{
    uint64_t latest = mine, deadline = fakecuda_now_ns() + fk_coll_timeout_ns;
    for (int q = 0; q < fk_coll_world; q++) {
        struct fk_coll_rank *r = &fk_coll_map->rank[q];
        if (q == fk_coll_rank_id)
            continue;
        for (unsigned spin = 0;; spin++) {
            if (fk_coll_lost[q])
                break;
            if (atomic_load(&r->count) > k) {
                uint64_t t = atomic_load(&r->arrival[k % FK_COLL_RING]);
                if (t > latest)
                    latest = t;
                break;
            }
            if (fk_coll_dead(atomic_load(&r->pid))) {
                fk_coll_lost[q] = 1;
                break;
            }
            if (fakecuda_now_ns() > deadline) {
                fprintf(stderr, "fakecuda: collective %llu of job %s: rank %d did not arrive in %llu ms; "
                                "rank %d no longer waits for it\n",
                        (unsigned long long)k, fk_coll_name + 10, q,
                        (unsigned long long)(fk_coll_timeout_ns / 1000000), fk_coll_rank_id);
                fk_coll_lost[q] = 1;
                break;
            }
            struct timespec ts = {0, spin < 100 ? 20000 : 200000};
            nanosleep(&ts, NULL);
        }
    }
    return latest;
}

void fk_coll_settle(void)
{
    if (!fk_coll_map || fk_coll_inside)
        return;
    pthread_mutex_lock(&fk_coll_mu);
    if (fk_coll_pending.set) {
        uint64_t latest = fk_coll_latest(fk_coll_pending.ordinal, fk_coll_pending.start);
        uint64_t end = latest + fk_coll_pending.dur;
        struct CUstream_st *s = fk_coll_pending.s;
        pthread_mutex_lock(&fk_lock);
        if (end > s->tail)
            s->tail = end;
        pthread_mutex_unlock(&fk_lock);
        fk_emit_work(s, &fk_coll_pending.n, fk_coll_pending.corr, fk_coll_pending.start, end, 0, 0);
        fk_coll_pending.set = 0;
    }
    pthread_mutex_unlock(&fk_coll_mu);
}

uint64_t fk_coll_launch(struct CUstream_st *s, const struct fk_node *n, uint32_t corr)
{
    uint64_t start;
    pthread_mutex_lock(&fk_coll_mu);
    while (fk_coll_pending.set) {
        pthread_mutex_unlock(&fk_coll_mu);
        fk_coll_settle();
        pthread_mutex_lock(&fk_coll_mu);
    }
    /* its place on the stream: it arrives when the stream's earlier work ends */
    fk_coll_inside = 1;
    fk_submit(s, 0, &start);
    fk_coll_inside = 0;
    uint64_t k = fk_coll_next++;
    struct fk_coll_rank *me = &fk_coll_map->rank[fk_coll_rank_id];
    atomic_store(&me->arrival[k % FK_COLL_RING], start);
    atomic_store(&me->count, k + 1);
    fk_coll_pending.set = 1;
    fk_coll_pending.s = s;
    fk_coll_pending.n = *n;
    fk_coll_pending.corr = corr;
    fk_coll_pending.ordinal = k;
    fk_coll_pending.start = start;
    fk_coll_pending.dur = fk_kernel_duration(n->f);
    pthread_mutex_unlock(&fk_coll_mu);
    return start;
}
