/* gt_exit.c: _exit and _Exit, the endings that skip atexit.
 *
 * Python's os._exit ends every multiprocessing worker (DataLoader's
 * included), and a fork child often leaves through _exit: without this the
 * last quarter second of such a process's events would be lost. The trace
 * is finished by the writer thread, as for a fatal signal, with a bounded
 * wait, and the process then exits exactly as asked. glibc's own exit()
 * reaches _exit internally, not through here. */
#include <sys/syscall.h>
#include <unistd.h>

#include "base/gt_base.h"
#include "session/gt_session.h"

#define GT_EXPORT_NORETURN __attribute__((visibility("default"), noreturn))

static _Noreturn void gt_exit_group(int status)
{
    for (;;)
        syscall(SYS_exit_group, status);
}

GT_EXPORT_NORETURN void _exit(int status)
{
    (void)gt_finish_at_exit();
    gt_exit_group(status);
}

GT_EXPORT_NORETURN void _Exit(int status)
{
    (void)gt_finish_at_exit();
    gt_exit_group(status);
}
