/* gt_cmd_trigger.c: `gputrace trigger`: opens a recording window in running
 * processes that run the shim in standby (GPUTRACE_MODE=standby), through
 * each one's control socket (preload/session/gt_control.c speaks the other
 * end; docs/standby.md). */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "base/gt_fmt.h"
#include "cmd/gt_cmds.h"

#define GT_TRIGGER_MAX 4096

void gt_cmd_trigger_usage(FILE *out)
{
    fprintf(out,
            "usage: gputrace trigger [--duration D | --steps N [--duration MAX]] [--at TIME]\n"
            "                        [--no-wait] [-q] PID...\n"
            "       gputrace trigger [options] --all\n"
            "       gputrace trigger --list\n\n"
            "Opens a recording window in running processes started with\n"
            "GPUTRACE_MODE=standby (and the shim preloaded): each records its CUDA\n"
            "calls for the window's duration into a trace of its own, named by\n"
            "GPUTRACE_OUTPUT with %%w the window's number (-w%%w is added before the\n"
            "extension when the pattern has no %%w). Sends no signal: the request\n"
            "goes through a socket in a directory private to the user.\n\n"
            "  --duration D  how long the window stays open (default 10s; D as 500ms,\n"
            "                10s, 5m, with its unit)\n"
            "  --steps N     record the next N whole training steps (NVTX ranges named\n"
            "                like step; GPUTRACE_STEP_RANGE in the process says which):\n"
            "                from the next step's start to the Nth step's end; with\n"
            "                --duration, at most that long (default 10m)\n"
            "  --at TIME     open the window at this wall-clock instant rather than\n"
            "                now: seconds since the epoch (1764050400.5), or +D from\n"
            "                now; the same TIME on every host opens windows at once\n"
            "  --no-wait     return once each window is open, not when its trace\n"
            "                is finished\n"
            "  --all         every standby process of this user on this machine\n"
            "  --list        list those processes and whether a window is open\n"
            "  -q            print nothing but errors\n\n"
            "The control directory is GPUTRACE_CONTROL_DIR, else\n"
            "$XDG_RUNTIME_DIR/gputrace, else /tmp/gputrace-UID (set the same in the\n"
            "traced processes' environment and here).\n\n"
            "Exit status: 0 every window opened (and, without --no-wait, finished);\n"
            "1 some process could not be reached or was busy; 2 usage error.\n");
}

static int gt_trigger_dir(char *out, size_t len)
{
    const char *d = getenv("GPUTRACE_CONTROL_DIR");
    const char *xdg = getenv("XDG_RUNTIME_DIR");
    int n = d && *d ? snprintf(out, len, "%s", d)
          : xdg && *xdg ? snprintf(out, len, "%s/gputrace", xdg)
                        : snprintf(out, len, "/tmp/gputrace-%u", (unsigned)geteuid());
    return n < 0 || (size_t)n >= len ? -1 : 0;
}

/* A connected socket to pid's channel, or -1 with errno. */
static int gt_trigger_connect(const char *dir, long pid)
{
    struct sockaddr_un addr;
    memset(&addr, 0, sizeof(addr));
    addr.sun_family = AF_UNIX;
    int n = snprintf(addr.sun_path, sizeof(addr.sun_path), "%s/%ld.sock", dir, pid);
    if (n < 0 || (size_t)n >= sizeof(addr.sun_path)) {
        errno = ENAMETOOLONG;
        return -1;
    }
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    if (connect(fd, (struct sockaddr *)&addr, sizeof(addr)) != 0) {
        int e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    return fd;
}

struct gt_trig {
    long pid;
    int fd;
    char buf[2048];
    size_t used;
    int state; /* 0 waiting for an answer, 1 open, 2 done, -1 failed */
};

/* The next whole line from t, or NULL (need more / closed: t->fd < 0). */
static char *gt_trigger_line(struct gt_trig *t, char *line, size_t len)
{
    char *nl = memchr(t->buf, '\n', t->used);
    if (!nl)
        return NULL;
    size_t n = (size_t)(nl - t->buf);
    if (n >= len)
        n = len - 1;
    memcpy(line, t->buf, n);
    line[n] = 0;
    size_t rest = t->used - (size_t)(nl - t->buf) - 1;
    memmove(t->buf, nl + 1, rest);
    t->used = rest;
    return line;
}

static void gt_trigger_answer(struct gt_trig *t, const char *line, int quiet, int *failed)
{
    int n;
    char path[1500];
    if (strcmp(line, "waiting") == 0) {
        if (!quiet)
            printf("%ld: waiting for the instant asked\n", t->pid);
    } else if (sscanf(line, "open %d %1499[^\n]", &n, path) == 2) {
        t->state = 1;
        if (!quiet)
            printf("%ld: window %d open, recording to %s\n", t->pid, n, path);
    } else if (sscanf(line, "done %d %1499[^\n]", &n, path) == 2) {
        t->state = 2;
        if (!quiet)
            printf("%ld: window %d closed; trace %s\n", t->pid, n, path);
    } else if (sscanf(line, "steps %d", &n) == 1) {
        if (!quiet)
            printf("%ld: %d whole step%s recorded\n", t->pid, n, n == 1 ? "" : "s");
    } else if (sscanf(line, "busy %d", &n) == 1) {
        t->state = -1;
        *failed = 1;
        gt_err("%ld: window %d is still open; try again when it closes", t->pid, n);
    } else {
        t->state = -1;
        *failed = 1;
        gt_err("%ld: %s", t->pid, strncmp(line, "error ", 6) == 0 ? line + 6 : line);
    }
}

static uint64_t gt_trigger_wall_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int gt_trigger_parse_at(const char *s, uint64_t *at)
{
    if (s[0] == '+') {
        uint64_t d;
        if (gt_parse_window_length(s + 1, &d) < 0)
            return -1;
        *at = gt_trigger_wall_ns() + d;
        return 0;
    }
    char *end;
    double v = strtod(s, &end);
    if (end == s || *end || !(v > 0) || v > 1e11)
        return -1;
    *at = (uint64_t)(v * 1e9 + 0.5);
    return 0;
}

/* The pids whose sockets are in dir and whose process exists. */
static int gt_trigger_all(const char *dir, long *pids, int max)
{
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) && n < max) {
        char *end;
        long pid = strtol(e->d_name, &end, 10);
        if (pid <= 0 || strcmp(end, ".sock") != 0 || (kill((pid_t)pid, 0) != 0 && errno == ESRCH))
            continue;
        pids[n++] = pid;
    }
    closedir(d);
    return n;
}

static int gt_trigger_list(const char *dir)
{
    static long pids[GT_TRIGGER_MAX];
    int n = gt_trigger_all(dir, pids, GT_TRIGGER_MAX);
    int shown = 0;
    for (int i = 0; i < n; i++) {
        int fd = gt_trigger_connect(dir, pids[i]);
        if (fd < 0)
            continue;
        struct timeval tv = {2, 0};
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
        struct gt_trig t = {.pid = pids[i], .fd = fd};
        char line[256] = "";
        if (send(fd, "ping\n", 5, MSG_NOSIGNAL) == 5) {
            ssize_t r;
            while (!gt_trigger_line(&t, line, sizeof(line)) &&
                   (r = recv(fd, t.buf + t.used, sizeof(t.buf) - 1 - t.used, 0)) > 0)
                t.used += (size_t)r;
            int w;
            if (strncmp(line, "standby", 7) == 0 || sscanf(line, "window %d", &w) == 1) {
                printf("%ld %s\n", pids[i], strncmp(line, "standby", 7) == 0 ? "standby" : line);
                shown++;
            }
        }
        close(fd);
    }
    if (!shown)
        printf("no standby process of this user under %s\n", dir);
    return GT_EXIT_OK;
}

int gt_cmd_trigger(int argc, char **argv)
{
    uint64_t dur = 10000000000ull, at = 0, steps = 0;
    int dur_given = 0;
    int nowait = 0, all = 0, list = 0, quiet = 0, npids = 0;
    static long pids[GT_TRIGGER_MAX];
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            gt_cmd_trigger_usage(stdout);
            return GT_EXIT_OK;
        } else if (strcmp(a, "--duration") == 0 && i + 1 < argc) {
            if (gt_parse_window_length(argv[++i], &dur) < 0 || dur == 0)
                return gt_usage_error("trigger", "--duration '%s' is not a duration above 0 with its unit (500ms, 10s, 5m)",
                                      argv[i]);
            dur_given = 1;
        } else if (strcmp(a, "--steps") == 0 && i + 1 < argc) {
            char *end;
            long long v = strtoll(argv[++i], &end, 10);
            if (*end || end == argv[i] || v <= 0 || v > 1000000000)
                return gt_usage_error("trigger", "--steps '%s' is not a number of steps above 0", argv[i]);
            steps = (uint64_t)v;
        } else if (strcmp(a, "--at") == 0 && i + 1 < argc) {
            if (gt_trigger_parse_at(argv[++i], &at) < 0)
                return gt_usage_error("trigger", "--at '%s' is not seconds since the epoch or +DURATION",
                                      argv[i]);
        } else if (strcmp(a, "--no-wait") == 0) {
            nowait = 1;
        } else if (strcmp(a, "--all") == 0) {
            all = 1;
        } else if (strcmp(a, "--list") == 0) {
            list = 1;
        } else if (strcmp(a, "-q") == 0) {
            quiet = 1;
        } else if (a[0] == '-') {
            return gt_usage_error("trigger", "unknown option '%s'", a);
        } else {
            char *end;
            long pid = strtol(a, &end, 10);
            if (*end || pid <= 0)
                return gt_usage_error("trigger", "'%s' is not a process id", a);
            if (npids < GT_TRIGGER_MAX)
                pids[npids++] = pid;
        }
    }
    char dir[108];
    if (gt_trigger_dir(dir, sizeof(dir)) < 0)
        return gt_usage_error("trigger", "the control directory path is too long");
    if (list)
        return gt_trigger_list(dir);
    if (all)
        npids = gt_trigger_all(dir, pids, GT_TRIGGER_MAX);
    else if (npids == 0)
        return gt_usage_error("trigger", "name the processes (PID...) or give --all");
    if (npids == 0) {
        gt_err("no standby process of this user under %s", dir);
        return GT_EXIT_FAIL;
    }
    static struct gt_trig t[GT_TRIGGER_MAX];
    int failed = 0, live = 0;
    char req[128];
    if (steps)
        snprintf(req, sizeof(req), "steps %" PRIu64 " %" PRIu64 " %" PRIu64 "\n", steps,
                 dur_given ? dur : (uint64_t)600000000000ull, at);
    else
        snprintf(req, sizeof(req), "open %" PRIu64 " %" PRIu64 "\n", dur, at);
    for (int i = 0; i < npids; i++) {
        t[i].pid = pids[i];
        t[i].used = 0;
        t[i].state = 0;
        t[i].fd = gt_trigger_connect(dir, pids[i]);
        if (t[i].fd < 0) {
            gt_err("%ld: no standby process listening under %s (%s)", pids[i], dir,
                   errno == ENOENT || errno == ECONNREFUSED ? "is it running with GPUTRACE_MODE=standby?"
                                                             : strerror(errno));
            t[i].state = -1;
            failed = 1;
            continue;
        }
        if (send(t[i].fd, req, strlen(req), MSG_NOSIGNAL) != (ssize_t)strlen(req)) {
            gt_err("%ld: %s", pids[i], strerror(errno));
            close(t[i].fd);
            t[i].fd = -1;
            t[i].state = -1;
            failed = 1;
            continue;
        }
        live++;
    }
    while (live > 0) {
        static struct pollfd p[GT_TRIGGER_MAX];
        int np = 0;
        for (int i = 0; i < npids; i++)
            p[np++] = (struct pollfd){t[i].fd, POLLIN, 0};
        if (poll(p, (nfds_t)np, -1) < 0) {
            if (errno == EINTR)
                continue;
            break;
        }
        for (int i = 0; i < npids; i++) {
            if (t[i].fd < 0 || !(p[i].revents & (POLLIN | POLLHUP | POLLERR)))
                continue;
            ssize_t r = recv(t[i].fd, t[i].buf + t[i].used, sizeof(t[i].buf) - 1 - t[i].used, 0);
            if (r > 0)
                t[i].used += (size_t)r;
            char line[1600];
            while (t[i].state >= 0 && t[i].state < 2 && gt_trigger_line(&t[i], line, sizeof(line)))
                gt_trigger_answer(&t[i], line, quiet, &failed);
            int finished = t[i].state < 0 || t[i].state == 2 || (nowait && t[i].state == 1);
            if (r <= 0 && !finished) {
                /* The process ended (or exec'd) while the window was open:
                 * its exit finished the trace. */
                if (t[i].state == 1) {
                    if (!quiet)
                        printf("%ld: the process ended during the window; its trace was finished at exit\n",
                               t[i].pid);
                } else {
                    gt_err("%ld: the process closed the channel without an answer", t[i].pid);
                    failed = 1;
                }
                finished = 1;
            }
            if (finished) {
                close(t[i].fd);
                t[i].fd = -1;
                live--;
            }
        }
    }
    return failed ? GT_EXIT_FAIL : GT_EXIT_OK;
}
