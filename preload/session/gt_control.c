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
 *   steps K MAX_NS AT_NS      -> as open, the window recording from the next
 *                                step's start to the Kth step's end (at most
 *                                MAX_NS), "steps DONE" before "done"
 *
 * An automatic window (GPUTRACE_TRIGGER) is asked for through an eventfd
 * the same thread polls beside the socket: a program thread writes it, the
 * control thread opens the window.
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
#include <stdatomic.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "base/gt_base.h"
#include "hot/gt_threads.h"
#include "session/gt_control.h"
#include "session/gt_flight.h"
#include "session/gt_session.h"

static char gt_ctl_path[sizeof(((struct sockaddr_un *)0)->sun_path)];
static int gt_ctl_fd = -1;
static pid_t gt_ctl_owner; /* the process whose socket gt_ctl_path is */
static _Atomic int gt_ctl_efd = -1; /* automatic windows asked for */
static char gt_ctl_why[256];        /* why, from gt_control_fire */
static pthread_mutex_t gt_ctl_why_lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic int gt_ctl_steps_over; /* a window by steps has its steps */
static _Atomic int gt_ctl_fire_pending; /* an automatic window asked for */
static _Atomic uint64_t gt_ctl_last_fire; /* when the last one was, gt_now_ns */

/* gputrace record's window (gt_control_plan_window), for the control thread. */
static _Atomic int gt_ctl_plan_pending;
static uint64_t gt_ctl_plan_at, gt_ctl_plan_dur, gt_ctl_plan_since;
static int gt_ctl_plan_n;

struct gt_ctl_channel {
    int fd, efd;
};

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
        if (now >= deadline || atomic_load(&gt_ctl_steps_over))
            return;
        uint64_t ms = (deadline - now + 999999) / 1000000;
        int efd = atomic_load(&gt_ctl_efd);
        struct pollfd p[2] = {{gt_ctl_fd, POLLIN, 0}, {efd, POLLIN, 0}};
        int r = poll(p, efd >= 0 ? 2 : 1, ms > 60000 ? 60000 : (int)ms);
        if (r <= 0)
            continue;
        if (efd >= 0 && (p[1].revents & POLLIN)) {
            /* steps over, or an automatic window asked for while this
             * one records anyway */
            uint64_t v;
            ssize_t got = read(efd, &v, sizeof(v));
            (void)got;
            atomic_store(&gt_ctl_fire_pending, 0);
        }
        if (!(p[0].revents & POLLIN))
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

/* A requested window: at `at` (wall clock, 0: now), for `dur` ns; with
 * `steps`, from the next step's start to the end of that many steps, at
 * most `dur`. */
static void gt_ctl_window(int c, unsigned long long dur, unsigned long long at, unsigned long long steps)
{
    if (at > gt_ctl_wall_ns()) {
        gt_ctl_send(c, "waiting\n");
        gt_ctl_sleep_until_wall(at);
    }
    char path[1024], err[512];
    atomic_store(&gt_ctl_steps_over, 0);
    int n = steps ? gt_session_window_open_steps(steps, path, sizeof(path), err, sizeof(err))
                  : gt_session_window_open(NULL, path, sizeof(path), err, sizeof(err));
    if (n < 0) {
        gt_ctl_send(c, "error %s\n", err);
        return;
    }
    gt_ctl_send(c, "open %d %s\n", n, path);
    gt_ctl_serve_busy(gt_now_ns() + dur, n);
    unsigned long long done = steps ? gt_session_window_steps_end() : 0;
    atomic_store(&gt_ctl_steps_over, 0);
    gt_session_window_close();
    if (steps)
        gt_ctl_send(c, "steps %llu\n", done);
    gt_ctl_send(c, "done %d %s\n", n, path);
}

static void gt_ctl_handle(int c)
{
    char line[128];
    if (gt_ctl_take(c, line, sizeof(line)) < 0)
        return;
    unsigned long long dur = 0, at = 0, steps = 0;
    if (strcmp(line, "ping") == 0)
        gt_ctl_send(c, "standby %ld\n", (long)getpid());
    else if (sscanf(line, "open %llu %llu", &dur, &at) == 2 && dur > 0)
        gt_ctl_window(c, dur, at, 0);
    else if (sscanf(line, "steps %llu %llu %llu", &steps, &dur, &at) == 3 && steps > 0 && dur > 0)
        gt_ctl_window(c, dur, at, steps);
    else
        gt_ctl_send(c, "error bad request\n");
    close(c);
}

/* An automatic window: open for GPUTRACE_TRIGGER_DURATION, answering
 * others meanwhile as for a triggered one. */
static void gt_ctl_auto_window(void)
{
    char why[sizeof(gt_ctl_why)], path[1024], err[512];
    pthread_mutex_lock(&gt_ctl_why_lock);
    memcpy(why, gt_ctl_why, sizeof(why));
    pthread_mutex_unlock(&gt_ctl_why_lock);
    int n = gt_session_window_open(why, path, sizeof(path), err, sizeof(err));
    if (n < 0)
        return; /* a window already open (triggered by hand) records it anyway */
    gt_ctl_serve_busy(gt_now_ns() + gt_session_trigger_duration_ns(), n);
    gt_session_window_close();
}

/* gputrace record's window: closed when its time is up (opened first if
 * it was not yet), answering others meanwhile. */
static void gt_ctl_planned_window(void)
{
    int n = gt_ctl_plan_n;
    uint64_t since = gt_ctl_plan_since;
    if (!n) {
        if (gt_ctl_plan_at > gt_ctl_wall_ns())
            gt_ctl_sleep_until_wall(gt_ctl_plan_at);
        char path[1024], err[512];
        n = gt_session_window_open("gputrace record", path, sizeof(path), err, sizeof(err));
        if (n < 0)
            return; /* one opened by gputrace trigger meanwhile records anyway */
        since = gt_now_ns();
    }
    if (!gt_ctl_plan_dur)
        return; /* to the end of the process */
    gt_ctl_serve_busy(since + gt_ctl_plan_dur, n);
    gt_session_window_close();
}

static void *gt_ctl_main(void *arg)
{
    struct gt_ctl_channel ch = *(struct gt_ctl_channel *)arg; /* this channel's own: a restart makes another */
    free(arg);
    gt_tls_busy = 1; /* the tracer's own thread: never recorded */
    gt_threads_mark_tracer((uint32_t)syscall(SYS_gettid)); /* nor sampled (GPUTRACE_SAMPLE_THREADS=all) */
    for (;;) {
        struct pollfd p[2] = {{ch.fd, POLLIN, 0}, {ch.efd, POLLIN, 0}};
        int r = poll(p, ch.efd >= 0 ? 2 : 1, -1);
        if (r > 0 && ch.efd >= 0 && (p[1].revents & POLLIN)) {
            uint64_t v;
            if (read(ch.efd, &v, sizeof(v)) != (ssize_t)sizeof(v))
                continue;
            if (atomic_exchange(&gt_ctl_plan_pending, 0))
                gt_ctl_planned_window();
            if (atomic_exchange(&gt_ctl_fire_pending, 0))
                gt_ctl_auto_window();
            continue;
        }
        if (r > 0 && (p[0].revents & (POLLHUP | POLLERR | POLLNVAL)) && !(p[0].revents & POLLIN)) {
            close(ch.fd); /* shut down by gt_control_restart: this channel is over */
            if (ch.efd >= 0)
                close(ch.efd);
            return NULL;
        }
        if (r <= 0)
            continue;
        int c = accept4(ch.fd, NULL, NULL, SOCK_CLOEXEC);
        if (c >= 0) {
            gt_ctl_handle(c);
            continue;
        }
        if (errno == EBADF || errno == EINVAL || errno == ENOTSOCK) {
            close(ch.fd); /* shut down by gt_control_restart: this channel is over */
            if (ch.efd >= 0)
                close(ch.efd);
            return NULL;
        }
        if (errno != EINTR && errno != ECONNABORTED && errno != EAGAIN)
            usleep(100000); /* out of descriptors: try again later, never spin */
    }
}

void gt_control_steps_done(void)
{
    atomic_store(&gt_ctl_steps_over, 1);
    int efd = atomic_load(&gt_ctl_efd);
    uint64_t one = 1;
    if (efd >= 0) {
        ssize_t w = write(efd, &one, sizeof(one));
        (void)w;
    }
}

void gt_control_plan_window(uint64_t at_wall_ns, uint64_t dur_ns, int open_n)
{
    gt_ctl_plan_at = at_wall_ns;
    gt_ctl_plan_dur = dur_ns;
    gt_ctl_plan_n = open_n;
    gt_ctl_plan_since = gt_now_ns();
    atomic_store(&gt_ctl_plan_pending, 1);
    int efd = atomic_load(&gt_ctl_efd);
    uint64_t one = 1;
    if (efd >= 0) {
        ssize_t w = write(efd, &one, sizeof(one));
        (void)w;
    }
}

void gt_control_fire(const char *why)
{
    int efd = atomic_load(&gt_ctl_efd);
    if (efd < 0)
        return;
    /* One cooldown for every rule: with both set, a slow step and the idle
     * GPU it causes open one window, not two. */
    uint64_t now = gt_now_ns(), last = atomic_load(&gt_ctl_last_fire);
    if (last && now - last < gt_session_trigger_cooldown_ns())
        return;
    if (!atomic_compare_exchange_strong(&gt_ctl_last_fire, &last, now))
        return;
    gt_flight_note_trigger(now); /* the flight recorder's window says where in it this fired */
    /* Never waits on the control thread: a reason being read is kept. */
    if (pthread_mutex_trylock(&gt_ctl_why_lock) == 0) {
        snprintf(gt_ctl_why, sizeof(gt_ctl_why), "%s", why);
        pthread_mutex_unlock(&gt_ctl_why_lock);
    }
    atomic_store(&gt_ctl_fire_pending, 1);
    uint64_t one = 1;
    ssize_t w = write(efd, &one, sizeof(one));
    (void)w; /* a full counter still wakes the thread */
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
    struct gt_ctl_channel *ch = malloc(sizeof(*ch));
    if (!ch) {
        snprintf(err, err_len, "out of memory");
        unlink(addr.sun_path);
        close(fd);
        return -1;
    }
    ch->fd = fd;
    ch->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    gt_ctl_fd = fd;
    memcpy(gt_ctl_path, addr.sun_path, sizeof(gt_ctl_path));
    gt_ctl_owner = getpid();
    int efd = ch->efd;
    int rc = gt_thread_spawn(NULL, 1, gt_ctl_main, ch);
    if (rc != 0) {
        snprintf(err, err_len, "cannot start the control thread: %s", strerror(rc));
        gt_control_stop();
        close(fd);
        if (efd >= 0)
            close(efd);
        free(ch);
        gt_ctl_fd = -1;
        return -1;
    }
    atomic_store(&gt_ctl_efd, efd);
    return 0;
}

int gt_control_restart(char *err, size_t err_len)
{
    atomic_store(&gt_ctl_efd, -1); /* closed by the old channel's thread */
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
    atomic_store(&gt_ctl_last_fire, 0); /* the child's windows are its own */
    atomic_store(&gt_ctl_plan_pending, 0);
    int efd = atomic_exchange(&gt_ctl_efd, -1);
    if (efd >= 0)
        close(efd);
    pthread_mutex_t fresh = PTHREAD_MUTEX_INITIALIZER;
    gt_ctl_why_lock = fresh;
    if (gt_ctl_fd >= 0)
        close(gt_ctl_fd);
    gt_ctl_fd = -1;
    gt_ctl_path[0] = 0;
}
