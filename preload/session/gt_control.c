/* gt_control.c: a standby process's control channel (gt_control.h).
 *
 * Runs on a thread of the tracer's own, created with every signal blocked
 * (the program's signals stay the program's), asleep in accept() while no
 * one asks for anything. The socket lives in a directory only its user can
 * enter (checked, never trusted), and every peer's uid is checked again
 * (SO_PEERCRED). One request a connection, one line each way:
 *
 *   ping                      -> standby PID | window N
 *   open DURATION_NS AT_NS    -> [waiting] open N PATH ... done N PATH
 *                                | busy N | error WHY
 *
 * AT_NS is a wall-clock instant (CLOCK_REALTIME, 0: now), so windows
 * triggered on many hosts at once cover the same steps. The client that
 * opened a window is told when its trace is whole; others asking meanwhile
 * are told the window is busy. */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "base/gt_base.h"
#include "hot/gt_threads.h"
#include "session/gt_control.h"
#include "session/gt_session.h"

static char gt_ctl_path[sizeof(((struct sockaddr_un *)0)->sun_path)];
static int gt_ctl_fd = -1;
static pid_t gt_ctl_owner; /* the process whose socket gt_ctl_path is */

/* The directory: GPUTRACE_CONTROL_DIR, else $XDG_RUNTIME_DIR/gputrace,
 * else /tmp/gputrace-UID; made 0700 if missing, and refused unless it is a
 * directory of this user's that no one else may enter. */
static int gt_ctl_dir(char *out, size_t len, char *err, size_t err_len)
{
    const char *d = getenv("GPUTRACE_CONTROL_DIR");
    const char *xdg = getenv("XDG_RUNTIME_DIR");
    int n;
    if (d && *d)
        n = snprintf(out, len, "%s", d);
    else if (xdg && *xdg)
        n = snprintf(out, len, "%s/gputrace", xdg);
    else
        n = snprintf(out, len, "/tmp/gputrace-%u", (unsigned)geteuid());
    if (n < 0 || (size_t)n >= len) {
        snprintf(err, err_len, "control directory path is too long");
        return -1;
    }
    if (mkdir(out, 0700) != 0 && errno != EEXIST) {
        snprintf(err, err_len, "cannot create %s: %s", out, strerror(errno));
        return -1;
    }
    struct stat st;
    if (lstat(out, &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 077)) {
        snprintf(err, err_len, "%s is not a directory of this user's alone (owner %u, mode 0700 wanted); "
                               "no trigger channel", out, (unsigned)geteuid());
        return -1;
    }
    return 0;
}

static void gt_ctl_send(int fd, const char *fmt, ...)
{
    char buf[1400];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if ((size_t)n >= sizeof(buf))
        n = (int)sizeof(buf) - 1;
    /* MSG_NOSIGNAL: a client gone away must not SIGPIPE the program. */
    ssize_t w = send(fd, buf, (size_t)n, MSG_NOSIGNAL);
    (void)w;
}

/* One line from the peer, within the socket's receive timeout. */
static int gt_ctl_read_line(int fd, char *buf, size_t len)
{
    size_t used = 0;
    while (used + 1 < len) {
        ssize_t r = recv(fd, buf + used, 1, 0);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return -1;
        if (buf[used] == '\n') {
            buf[used] = 0;
            return 0;
        }
        used++;
    }
    return -1;
}

static int gt_ctl_peer_is_us(int fd)
{
    struct ucred cred;
    socklen_t len = sizeof(cred);
    return getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0 && cred.uid == geteuid();
}

/* A new connection: checked, its line read. 0 with the line, or -1 (the
 * connection is closed then). */
static int gt_ctl_take(int c, char *line, size_t len)
{
    struct timeval tv = {2, 0};
    setsockopt(c, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    setsockopt(c, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
    if (!gt_ctl_peer_is_us(c)) {
        gt_ctl_send(c, "error permission denied\n");
        close(c);
        return -1;
    }
    if (gt_ctl_read_line(c, line, len) < 0) {
        close(c);
        return -1;
    }
    return 0;
}

/* While window `n` is open: answers whoever else asks, until `deadline`
 * (CLOCK_MONOTONIC ns). */
static void gt_ctl_serve_busy(uint64_t deadline, int n)
{
    for (;;) {
        uint64_t now = gt_now_ns();
        if (now >= deadline)
            return;
        uint64_t ms = (deadline - now + 999999) / 1000000;
        struct pollfd p = {gt_ctl_fd, POLLIN, 0};
        int r = poll(&p, 1, ms > 60000 ? 60000 : (int)ms);
        if (r <= 0)
            continue;
        int c = accept4(gt_ctl_fd, NULL, NULL, SOCK_CLOEXEC);
        if (c < 0)
            continue;
        char line[128];
        if (gt_ctl_take(c, line, sizeof(line)) < 0)
            continue;
        if (strcmp(line, "ping") == 0)
            gt_ctl_send(c, "window %d\n", n);
        else
            gt_ctl_send(c, "busy %d\n", n);
        close(c);
    }
}

static void gt_ctl_sleep_until_wall(uint64_t at_ns)
{
    struct timespec ts = {(time_t)(at_ns / 1000000000u), (long)(at_ns % 1000000000u)};
    while (clock_nanosleep(CLOCK_REALTIME, TIMER_ABSTIME, &ts, NULL) == EINTR)
        ;
}

static uint64_t gt_ctl_wall_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void gt_ctl_handle(int c)
{
    char line[128];
    if (gt_ctl_take(c, line, sizeof(line)) < 0)
        return;
    unsigned long long dur = 0, at = 0;
    if (strcmp(line, "ping") == 0) {
        gt_ctl_send(c, "standby %ld\n", (long)getpid());
    } else if (sscanf(line, "open %llu %llu", &dur, &at) == 2 && dur > 0) {
        if (at > gt_ctl_wall_ns()) {
            gt_ctl_send(c, "waiting\n");
            gt_ctl_sleep_until_wall(at);
        }
        char path[1024], err[512];
        int n = gt_session_window_open(path, sizeof(path), err, sizeof(err));
        if (n < 0) {
            gt_ctl_send(c, "error %s\n", err);
        } else {
            gt_ctl_send(c, "open %d %s\n", n, path);
            gt_ctl_serve_busy(gt_now_ns() + dur, n);
            gt_session_window_close();
            gt_ctl_send(c, "done %d %s\n", n, path);
        }
    } else {
        gt_ctl_send(c, "error bad request\n");
    }
    close(c);
}

static void *gt_ctl_main(void *arg)
{
    int fd = (int)(intptr_t)arg; /* this channel's own: a restart makes another */
    gt_tls_busy = 1;             /* the tracer's own thread: never recorded */
    gt_threads_mark_tracer((uint32_t)syscall(SYS_gettid)); /* nor sampled (GPUTRACE_SAMPLE_THREADS=all) */
    for (;;) {
        int c = accept4(fd, NULL, NULL, SOCK_CLOEXEC);
        if (c >= 0) {
            gt_ctl_handle(c);
            continue;
        }
        if (errno == EBADF || errno == EINVAL || errno == ENOTSOCK) {
            close(fd); /* shut down by gt_control_restart: this channel is over */
            return NULL;
        }
        if (errno != EINTR && errno != ECONNABORTED)
            usleep(100000); /* out of descriptors: try again later, never spin */
    }
}

int gt_control_start(char *err, size_t err_len)
{
    char dir[sizeof(gt_ctl_path)];
    if (gt_ctl_dir(dir, sizeof(dir), err, err_len) < 0)
        return -1;
    struct sockaddr_un addr;
    memset(&addr, 0, sizeof(addr));
    addr.sun_family = AF_UNIX;
    int n = snprintf(addr.sun_path, sizeof(addr.sun_path), "%s/%ld.sock", dir, (long)getpid());
    if (n < 0 || (size_t)n >= sizeof(addr.sun_path)) {
        snprintf(err, err_len, "control socket path under %s is too long", dir);
        return -1;
    }
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        snprintf(err, err_len, "socket: %s", strerror(errno));
        return -1;
    }
    /* A socket left by a process that had this pid, or by this process's
     * image before an exec, is stale: the directory is ours alone. */
    unlink(addr.sun_path);
    if (bind(fd, (struct sockaddr *)&addr, sizeof(addr)) != 0 || listen(fd, 8) != 0) {
        snprintf(err, err_len, "cannot listen on %s: %s", addr.sun_path, strerror(errno));
        close(fd);
        return -1;
    }
    chmod(addr.sun_path, 0600);
    gt_ctl_fd = fd;
    memcpy(gt_ctl_path, addr.sun_path, sizeof(gt_ctl_path));
    gt_ctl_owner = getpid();
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    pthread_t t;
    int rc = pthread_create(&t, &attr, gt_ctl_main, (void *)(intptr_t)fd);
    pthread_attr_destroy(&attr);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc != 0) {
        snprintf(err, err_len, "cannot start the control thread: %s", strerror(rc));
        gt_control_stop();
        close(fd);
        gt_ctl_fd = -1;
        return -1;
    }
    return 0;
}

int gt_control_restart(char *err, size_t err_len)
{
    if (gt_ctl_fd >= 0)
        shutdown(gt_ctl_fd, SHUT_RDWR); /* its thread's accept() fails: it closes the socket and ends */
    gt_ctl_fd = -1;
    return gt_control_start(err, err_len);
}

void gt_control_stop(void)
{
    if (gt_ctl_path[0] && gt_ctl_owner == getpid())
        unlink(gt_ctl_path);
    gt_ctl_path[0] = 0;
}

void gt_control_after_fork_child(void)
{
    if (gt_ctl_fd >= 0)
        close(gt_ctl_fd);
    gt_ctl_fd = -1;
    gt_ctl_path[0] = 0;
}
