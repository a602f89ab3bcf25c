/* gt_record_window.c: one recording window opened by `gputrace record` in
 * the command it runs (gt_record_window.h). The command's shim speaks the
 * standby protocol (preload/session/gt_control.c); record only connects,
 * asks once and keeps the connection while the command runs. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cmd/gt_record_window.h"

/* "Until it exits": longer than any run. */
#define GT_FOREVER_NS 1000000000000000000ull

static int gt_rw_connect(pid_t pid)
{
    const char *d = getenv("GPUTRACE_CONTROL_DIR");
    const char *xdg = getenv("XDG_RUNTIME_DIR");
    struct sockaddr_un addr;
    memset(&addr, 0, sizeof(addr));
    addr.sun_family = AF_UNIX;
    int n = d && *d ? snprintf(addr.sun_path, sizeof(addr.sun_path), "%s/%ld.sock", d, (long)pid)
          : xdg && *xdg ? snprintf(addr.sun_path, sizeof(addr.sun_path), "%s/gputrace/%ld.sock", xdg, (long)pid)
                        : snprintf(addr.sun_path, sizeof(addr.sun_path), "/tmp/gputrace-%u/%ld.sock",
                                   (unsigned)geteuid(), (long)pid);
    if (n < 0 || (size_t)n >= sizeof(addr.sun_path))
        return -1;
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    if (connect(fd, (struct sockaddr *)&addr, sizeof(addr)) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

int gt_record_window_wait(pid_t pid, uint64_t delay_ns, uint64_t duration_ns, uint64_t start_wall_ns,
                          int *status)
{
    int fd = -1;
    for (;;) {
        pid_t w = waitpid(pid, status, fd < 0 ? WNOHANG : 0);
        if (w == pid)
            break;
        if (w < 0 && errno != EINTR) {
            if (fd >= 0)
                close(fd);
            return -1;
        }
        if (fd >= 0 || w < 0)
            continue;
        /* the channel appears at the command's first CUDA call */
        if ((fd = gt_rw_connect(pid)) >= 0) {
            char req[96];
            int n = snprintf(req, sizeof(req), "open %llu %llu\n",
                             (unsigned long long)(duration_ns ? duration_ns : GT_FOREVER_NS),
                             (unsigned long long)(delay_ns ? start_wall_ns + delay_ns : 0));
            if (send(fd, req, (size_t)n, MSG_NOSIGNAL) != n) {
                close(fd);
                fd = -1;
            }
            continue;
        }
        struct timespec ts = {0, 5000000};
        nanosleep(&ts, NULL);
    }
    if (fd >= 0)
        close(fd);
    return 0;
}
