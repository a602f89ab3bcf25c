/* gt_base.c: the state word, the busy flag, the warning line and the
 * start of the tracer's own threads. */
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <unistd.h>

#include "base/gt_base.h"

GT_TLS int gt_tls_busy;
_Atomic int gt_state = GT_STATE_IDLE;

void gt_warn(const char *fmt, ...)
{
    char line[1024];
    int n = snprintf(line, sizeof(line), "gputrace: ");
    va_list ap;
    va_start(ap, fmt);
    int m = vsnprintf(line + n, sizeof(line) - (size_t)n - 1, fmt, ap);
    va_end(ap);
    size_t len = (size_t)n + (m < 0 ? 0 : (size_t)m);
    if (len > sizeof(line) - 2)
        len = sizeof(line) - 2;
    line[len++] = '\n';
    ssize_t w = write(STDERR_FILENO, line, len);
    (void)w;
}

int gt_thread_spawn(pthread_t *t, int detached, void *(*fn)(void *), void *arg)
{
    pthread_t mine;
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    if (detached)
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    int rc = pthread_create(t ? t : &mine, &attr, fn, arg);
    pthread_attr_destroy(&attr);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return rc;
}
