/* gt_writer_samples.c: host samples (api GT_API_SAMPLE, from the sampler's
 * ring) into `samples`; the names of the system calls they may name into
 * `syscall_names`; the sampler's counters into meta. Writer thread only. */
#include <sqlite3.h>

#include "base/gt_event.h"
#include "sampler/gt_sampler.h"
#include "writer/gt_writer_int.h"

/* x86-64 numbers of the calls a thread is most often found blocked in;
 * others read "syscall N" in the host_samples view. */
static const struct {
    int nr;
    const char *name;
} gt_syscalls[] = {
    {0, "read"}, {1, "write"}, {7, "poll"}, {17, "pread64"}, {18, "pwrite64"}, {19, "readv"}, {20, "writev"},
    {23, "select"}, {24, "sched_yield"}, {34, "pause"}, {35, "nanosleep"}, {43, "accept"}, {44, "sendto"},
    {45, "recvfrom"}, {46, "sendmsg"}, {47, "recvmsg"}, {61, "wait4"}, {72, "fcntl"}, {74, "fsync"},
    {75, "fdatasync"}, {202, "futex"}, {230, "clock_nanosleep"}, {232, "epoll_wait"}, {257, "openat"},
    {270, "pselect6"}, {271, "ppoll"}, {281, "epoll_pwait"}, {288, "accept4"}, {3, "close"}, {9, "mmap"},
    {11, "munmap"}, {4, "stat"}, {5, "fstat"}, {262, "newfstatat"}, {16, "ioctl"}, {247, "waitid"},
    {299, "recvmmsg"}, {307, "sendmmsg"}, {435, "clone3"}, {56, "clone"}, {59, "execve"}, {60, "exit"},
    {231, "exit_group"}, {441, "epoll_pwait2"}, {426, "io_uring_enter"},
    /* waits on no descriptors: sleeps (the sampler's GT_SYSCALL_NO_FDS) */
    {GT_SYSCALL_NO_FDS + 23, "select (no fds)"}, {GT_SYSCALL_NO_FDS + 270, "pselect6 (no fds)"},
    {GT_SYSCALL_NO_FDS + 7, "poll (no fds)"}, {GT_SYSCALL_NO_FDS + 271, "ppoll (no fds)"},
};

int gt_write_syscall_names(struct gt_writer *w)
{
    sqlite3_stmt *s = NULL;
    int rc = sqlite3_prepare_v2(w->db, "INSERT INTO syscall_names VALUES(?,?)", -1, &s, NULL);
    for (size_t i = 0; rc == SQLITE_OK && i < sizeof(gt_syscalls) / sizeof(gt_syscalls[0]); i++) {
        sqlite3_bind_int64(s, 1, gt_syscalls[i].nr);
        sqlite3_bind_text(s, 2, gt_syscalls[i].name, -1, SQLITE_STATIC);
        rc = sqlite3_step(s) == SQLITE_DONE ? SQLITE_OK : SQLITE_ERROR;
        sqlite3_reset(s);
    }
    sqlite3_finalize(s);
    return rc;
}

void gt_write_sample(struct gt_writer *w, const struct gt_event *e)
{
    gt_emit_thread(w, e->u.sample.tid);
    gt_emit_stack(w, e->stack_id);
    gt_emit_pystack(w, e->pystack_id);
    sqlite3_stmt *s = w->st[ST_SAMPLE];
    sqlite3_bind_int64(s, 1, e->u.sample.tid);
    sqlite3_bind_int64(s, 2, (int64_t)e->start_ns);
    sqlite3_bind_int64(s, 3, e->u.sample.state);
    if (e->u.sample.syscall >= 0)
        sqlite3_bind_int64(s, 4, e->u.sample.syscall);
    else
        sqlite3_bind_null(s, 4);
    if (e->stack_id)
        sqlite3_bind_int64(s, 5, e->stack_id);
    else
        sqlite3_bind_null(s, 5);
    if (e->pystack_id)
        sqlite3_bind_int64(s, 6, e->pystack_id);
    else
        sqlite3_bind_null(s, 6);
    gt_step(w, ST_SAMPLE);
}

void gt_writer_sample_counters(struct gt_writer *w, void (*meta)(struct gt_writer *, const char *, uint64_t))
{
    meta(w, "samples_rounds", gt_sampler_rounds());
    meta(w, "samples_taken", gt_sampler_taken());
    meta(w, "samples_torn", gt_sampler_torn());
    meta(w, "samples_stale", gt_sampler_stale());
    meta(w, "samples_dropped", gt_sampler_dropped());
    meta(w, "samples_slowed", gt_sampler_slowed());
    meta(w, "tracer_sampler_cpu_ns", gt_sampler_cpu_ns());
    /* perf events opened, or refused (the file's first value said what
     * the settings asked for) */
    const char *native = gt_sampler_native();
    if (native)
        gt_meta(w, "sample_native_stacks", native);
}
