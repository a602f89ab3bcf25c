/* gt_signals.h: finishing the trace when SIGINT or SIGTERM kills the program. */
#ifndef GT_SIGNALS_H
#define GT_SIGNALS_H

/* Installs handlers for the signals whose action is the default. */
void gt_signals_install(void);

#endif
