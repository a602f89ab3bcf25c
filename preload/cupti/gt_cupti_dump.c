/* gt_cupti_dump.c: GPUTRACE_CUPTI_DUMP=PATH writes every record CUPTI
 * hands the tracer, one line each, to PATH.PID: a diagnostic for a real
 * GPU whose records do not link (docs/validation.md), never on otherwise.
 * Runs on the thread each buffer comes back on. */
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "cupti/gt_cupti_int.h"

static int gt_dump_fd = -1; /* -1: off */
/* Buffers come back on CUPTI's thread and on any thread that flushes
 * (the program's, at exit): the file is opened once, whichever is first. */
static pthread_once_t gt_dump_once = PTHREAD_ONCE_INIT;

static void gt_dump_open_once(void)
{
    const char *p = getenv("GPUTRACE_CUPTI_DUMP");
    if (p && *p) {
        char path[4096];
        snprintf(path, sizeof path, "%s.%d", p, (int)getpid());
        gt_dump_fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    }
}

static int gt_dump_open(void)
{
    pthread_once(&gt_dump_once, gt_dump_open_once);
    return gt_dump_fd;
}

void gt_cupti_dump_note(const char *fmt, ...)
{
    int fd = gt_dump_open();
    if (fd < 0)
        return;
    va_list ap;
    va_start(ap, fmt);
    dprintf(fd, "# ");
    vdprintf(fd, fmt, ap);
    dprintf(fd, "\n");
    va_end(ap);
}

void gt_cupti_dump_buffer(uint8_t *buf, size_t valid)
{
    int fd = gt_dump_open();
    if (fd < 0 || !gt_cu.next_record)
        return;
    CUpti_Activity *r = NULL;
    while (gt_cu.next_record(buf, valid, &r) == CUPTI_SUCCESS) {
        switch (r->kind) {
        case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: {
            const CUpti_ActivityExternalCorrelation *x = (const void *)r;
            dprintf(fd, "ext kind=%d id=%llu corr=%u\n", (int)x->externalKind, (unsigned long long)x->externalId,
                    x->correlationId);
            break;
        }
        case CUPTI_ACTIVITY_KIND_DRIVER:
        case CUPTI_ACTIVITY_KIND_RUNTIME: {
            const CUpti_ActivityAPI *a = (const void *)r;
            dprintf(fd, "%s cbid=%u corr=%u tid=%u start=%llu\n", r->kind == CUPTI_ACTIVITY_KIND_DRIVER ? "driver"
                                                                                                        : "runtime",
                    a->cbid, a->correlationId, a->threadId, (unsigned long long)a->start);
            break;
        }
        case CUPTI_ACTIVITY_KIND_KERNEL:
        case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
            const CUpti_ActivityKernel10 *k = (const void *)r;
            dprintf(fd, "kernel corr=%u start=%llu %.60s\n", k->correlationId, (unsigned long long)k->start,
                    k->name ? k->name : "?");
            break;
        }
        case CUPTI_ACTIVITY_KIND_MEMCPY: {
            const CUpti_ActivityMemcpy6 *c = (const void *)r;
            dprintf(fd, "memcpy corr=%u start=%llu bytes=%llu\n", c->correlationId, (unsigned long long)c->start,
                    (unsigned long long)c->bytes);
            break;
        }
        case CUPTI_ACTIVITY_KIND_MEMSET: {
            const CUpti_ActivityMemset4 *s = (const void *)r;
            dprintf(fd, "memset corr=%u\n", s->correlationId);
            break;
        }
        case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: {
            const CUpti_ActivitySynchronization2 *y = (const void *)r;
            dprintf(fd, "sync corr=%u\n", y->correlationId);
            break;
        }
        default:
            dprintf(fd, "kind %d\n", (int)r->kind);
            break;
        }
    }
}
