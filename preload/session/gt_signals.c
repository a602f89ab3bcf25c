/* gt_signals.c: a trace that survives Ctrl-C and kill.
 *
 * For SIGINT and SIGTERM whose action is still the default (a program with
 * handlers of its own, Python's for SIGINT among them, keeps them, and
 * exits through atexit), the handler asks the writer thread to finish the
 * trace, waits for it a bounded time, and dies of the signal as the program
 * would have: same exit status, same parent-visible cause. The handler only
 * does async-signal-safe things; the writer does the work. */
#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>

#include "base/gt_base.h"
#include "session/gt_signals.h"
#include "writer/gt_writer.h"

#define GT_SIGNAL_WAIT_S 5 /* a wedged writer must not keep a dying program alive */

static atomic_int gt_signal_seen;

static void gt_on_signal(int sig)
{
    int saved = errno;
    /* No trace open (a standby process between windows): nothing to wait for. */
    if (atomic_load(&gt_state) == GT_STATE_ACTIVE && !atomic_exchange(&gt_signal_seen, 1)) {
        gt_writer_finish_on_signal(sig);
        gt_writer_wait_finished(GT_SIGNAL_WAIT_S);
    }
    errno = saved;
    /* SA_RESETHAND put the default action back: this ends the process. */
    raise(sig);
}

void gt_signals_install(void)
{
    static const int sigs[] = {SIGINT, SIGTERM};
    for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
        struct sigaction old;
        if (sigaction(sigs[i], NULL, &old) != 0 || (old.sa_flags & SA_SIGINFO) || old.sa_handler != SIG_DFL)
            continue;
        struct sigaction sa;
        memset(&sa, 0, sizeof(sa));
        sa.sa_handler = gt_on_signal;
        sigemptyset(&sa.sa_mask);
        sa.sa_flags = SA_RESETHAND | SA_RESTART;
        sigaction(sigs[i], &sa, NULL);
    }
}
