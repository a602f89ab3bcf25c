/* gt_exec.c: the exec family. exec replaces the program without running
 * atexit handlers, so the trace is finished first (by the writer thread,
 * with a bounded wait, as for _exit); the new image, which inherits the
 * preload, starts its own trace, named apart from this one (session/gt_session.c).
 * If exec fails and returns, the rest of this process is not traced, and
 * one line says so. */
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <unistd.h>

#include "base/gt_base.h"
#include "session/gt_session.h"

typedef int (*gt_execve_fn)(const char *, char *const[], char *const[]);
typedef int (*gt_execv_fn)(const char *, char *const[]);
typedef int (*gt_fexecve_fn)(int, char *const[], char *const[]);

extern char **environ;

/* Resolved once, at load: exec is often called in a vfork child, which
 * shares the parent's memory and should run as little as possible. */
static void *gt_real_exec[5];
static const char *const gt_exec_names[5] = {"execve", "execv", "execvp", "execvpe", "fexecve"};

__attribute__((constructor)) static void gt_exec_init(void)
{
    for (int i = 0; i < 5; i++)
        gt_real_exec[i] = dlsym(RTLD_NEXT, gt_exec_names[i]);
}

static void *gt_next(const char *name)
{
    for (int i = 0; i < 5; i++)
        if (gt_exec_names[i] == name || __builtin_strcmp(gt_exec_names[i], name) == 0) {
            void *p = __atomic_load_n(&gt_real_exec[i], __ATOMIC_ACQUIRE);
            if (!p) {
                p = dlsym(RTLD_NEXT, name);
                __atomic_store_n(&gt_real_exec[i], p, __ATOMIC_RELEASE);
            }
            return p;
        }
    return dlsym(RTLD_NEXT, name);
}

static int gt_exec_failed(int finished, int rc)
{
    int saved = errno;
    gt_exec_returned(finished);
    errno = saved;
    return rc;
}

GT_EXPORT int execve(const char *path, char *const argv[], char *const envp[])
{
    gt_execve_fn real = (gt_execve_fn)gt_next("execve");
    if (!real) {
        errno = ENOSYS;
        return -1;
    }
    int finished = gt_finish_before_exec();
    return gt_exec_failed(finished, real(path, argv, envp));
}

GT_EXPORT int execv(const char *path, char *const argv[])
{
    gt_execv_fn real = (gt_execv_fn)gt_next("execv");
    if (!real) {
        errno = ENOSYS;
        return -1;
    }
    int finished = gt_finish_before_exec();
    return gt_exec_failed(finished, real(path, argv));
}

GT_EXPORT int execvp(const char *file, char *const argv[])
{
    gt_execv_fn real = (gt_execv_fn)gt_next("execvp");
    if (!real) {
        errno = ENOSYS;
        return -1;
    }
    int finished = gt_finish_before_exec();
    return gt_exec_failed(finished, real(file, argv));
}

GT_EXPORT int execvpe(const char *file, char *const argv[], char *const envp[])
{
    gt_execve_fn real = (gt_execve_fn)gt_next("execvpe");
    if (!real) {
        errno = ENOSYS;
        return -1;
    }
    int finished = gt_finish_before_exec();
    return gt_exec_failed(finished, real(file, argv, envp));
}

GT_EXPORT int fexecve(int fd, char *const argv[], char *const envp[])
{
    gt_fexecve_fn real = (gt_fexecve_fn)gt_next("fexecve");
    if (!real) {
        errno = ENOSYS;
        return -1;
    }
    int finished = gt_finish_before_exec();
    return gt_exec_failed(finished, real(fd, argv, envp));
}

/* The list forms, collected into an argument vector on the stack and
 * handed to the vector forms above. */
#define GT_COLLECT_ARGS(first, ap, argv, extra_envp)                                  \
    size_t n_ = 1;                                                                    \
    va_start(ap, first);                                                              \
    while (va_arg(ap, const char *))                                                  \
        n_++;                                                                         \
    va_end(ap);                                                                       \
    char *argv[n_ + 1];                                                               \
    argv[0] = (char *)(first);                                                        \
    va_start(ap, first);                                                              \
    for (size_t i_ = 1; i_ <= n_; i_++)                                               \
        argv[i_] = va_arg(ap, char *);                                                \
    extra_envp;                                                                       \
    va_end(ap)

GT_EXPORT int execl(const char *path, const char *arg, ...)
{
    va_list ap;
    GT_COLLECT_ARGS(arg, ap, argv, (void)0);
    return execv(path, argv);
}

GT_EXPORT int execlp(const char *file, const char *arg, ...)
{
    va_list ap;
    GT_COLLECT_ARGS(arg, ap, argv, (void)0);
    return execvp(file, argv);
}

GT_EXPORT int execle(const char *path, const char *arg, ...)
{
    va_list ap;
    char *const *envp = NULL;
    GT_COLLECT_ARGS(arg, ap, argv, envp = va_arg(ap, char *const *));
    return execve(path, argv, envp);
}
