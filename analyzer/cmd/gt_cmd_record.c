/* gt_cmd_record.c: `gputrace record`: run a command with the shim preloaded
 * and stand in for it: same exit status, signals passed through. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>

#include "cmd/gt_record_output.h"
#include "cmd/gt_record_summary.h"
#include "base/gt_fmt.h"
#include <time.h>
#include <unistd.h>

#include "cmd/gt_cmds.h"
#include "preload/base/gt_config.h" /* the shim's own parser, shared */

#define GT_SHIM_NAME "libgputrace.so"

void gt_cmd_record_usage(FILE *out)
{
    fprintf(out,
            "usage: gputrace record [-q] [-o PATTERN] [--force] [--stack-depth N]\n"
            "                       [--max-size SIZE[:last]]\n"
            "                       [--delay D] [--duration D] [--capture-range=RANGE\n"
            "                       [--capture-range-end=END]] [--] COMMAND [ARGS]\n"
            "\n"
            "Runs COMMAND with libgputrace.so preloaded. Every process that loads the\n"
            "CUDA runtime or driver writes its own trace file. gputrace exits with\n"
            "COMMAND's exit status (128+N if it was killed by signal N) and passes\n"
            "SIGINT, SIGTERM, SIGHUP and SIGQUIT on to it. When COMMAND ends, a few\n"
            "lines on stderr say where each trace is, what it holds, the top finding\n"
            "of the report, and the command that shows more (\"no recorded calls, no\n"
            "trace written\" when COMMAND made no call the tracer records).\n"
            "\n"
            "options:\n"
            "  -o, --output PATTERN  trace file path; sets GPUTRACE_OUTPUT.\n"
            "                        %%p pid, %%n program name, %%h host name,\n"
            "                        %%r rank (RANK, OMPI_COMM_WORLD_RANK, PMI_RANK,\n"
            "                        SLURM_PROCID...; 0 if none), %%%% a literal %%.\n"
            "                        Default: %s\n"
            "                        Its directory must exist and be writable, and a\n"
            "                        trace already at the name is kept: record stops\n"
            "                        (status 2) before COMMAND starts. A process that\n"
            "                        finds the name taken (being written, or created\n"
            "                        meanwhile) writes beside it (t.2.db), and says so\n"
            "  --force               replace a trace already at the name (one no\n"
            "                        process is writing); sets GPUTRACE_FORCE_OVERWRITE\n"
            "  --stack-depth N       native frames kept per call, 0 to %d, 0 turns\n"
            "                        stacks off; sets GPUTRACE_STACK_DEPTH. Default %d.\n"
            "  --max-size SIZE[:last]  bound each trace file (256MiB, 1GiB; binary):\n"
            "                        at it recording stops (meta.stop_reason max_size);\n"
            "                        with :last the run goes into memory instead and\n"
            "                        its last part is written at exit, calls only (no\n"
            "                        GPU times). Sets GPUTRACE_MAX_SIZE\n"
            "  --delay D             record only from D after COMMAND starts (500ms,\n"
            "                        10s, 5m; the unit is required), or from its first\n"
            "                        CUDA call if that comes later (0s: from the first\n"
            "                        call): COMMAND runs in standby and opens one\n"
            "                        window (docs/standby.md); processes it starts\n"
            "                        record nothing\n"
            "  --duration D          record for D only, from the window's opening (the\n"
            "                        delay's end, or the first CUDA call), then let\n"
            "                        calls pass through\n"
            "  --capture-range=RANGE record only inside ranges the program marks, one\n"
            "                        trace per range (end stop: the name given; else\n"
            "                        -wN before the extension, %%w):\n"
            "                        cudaProfilerApi: from cudaProfilerStart to\n"
            "                        cudaProfilerStop (or cuProfilerStart/Stop);\n"
            "                        nvtx:NAME[@DOMAIN]: inside NVTX ranges named NAME\n"
            "                        (a glob; DOMAIN * any domain, none given: the\n"
            "                        default one). Sets GPUTRACE_CAPTURE_RANGE\n"
            "  --capture-range-end=END  after a range ends: stop (default: record no\n"
            "                        more ranges), repeat[:N] (the next ranges too, N\n"
            "                        at most) or none (record on to the end). The\n"
            "                        program runs on in each case\n"
            "  -q, --quiet           no closing summary\n"
            "  -h, --help            show this help\n"
            "\n"
            "'--' is needed only when COMMAND starts with '-'.\n"
            "\n"
            "environment (read by the traced processes; options above override):\n"
            "  GPUTRACE_OUTPUT         as -o\n"
            "  GPUTRACE_FORCE_OVERWRITE  1: as --force; 0 (default): a trace already\n"
            "                          at the name is kept and this one written beside\n"
            "  GPUTRACE_STACK_DEPTH    as --stack-depth\n"
            "  GPUTRACE_MAX_SIZE       as --max-size\n"
            "  GPUTRACE_BUFFER_EVENTS  largest per-thread event ring, a power of two\n"
            "                          from 64 to 1048576. Default %u.\n"
            "  GPUTRACE_PYTHON         1 (default): for calls made from Python, also\n"
            "                          the Python stack (file, function, line), read\n"
            "                          without the GIL (CPython 3.10 to 3.13); 0: off.\n"
            "  GPUTRACE_GPU_TIMING     cupti (default): GPU-side times through CUPTI's\n"
            "                          Activity API; off: host-side times only.\n"
            "  GPUTRACE_CUPTI_PATH     the CUPTI library to load (default: the one\n"
            "                          beside the process's CUDA runtime, then the\n"
            "                          library path, then /usr/local/cuda).\n"
            "  NVTX_INJECTION64_PATH   set to the shim, so NVTX ranges and marks are\n"
            "                          recorded (the preloaded shim does the same);\n"
            "                          when COMMAND's environment already sets it\n"
            "                          (another NVTX tool), it is left alone.\n"
            "  GPUTRACE_NVTX           1 (default) or 0: NVTX ranges and marks not\n"
            "                          recorded, and NVTX_INJECTION64_PATH not set.\n"
            "  GPUTRACE_DEBUG_DIR      one more root for separate debug files (by\n"
            "                          build-id or .gnu_debuglink), searched before\n"
            "                          /usr/lib/debug, for native source lines.\n"
            "  GPUTRACE_SAMPLE_HZ      host samples a second, 0 (off) to 1000 (default\n"
            "                          100): what each thread was doing, read by the\n"
            "                          tracer's own thread, never a signal.\n"
            "  GPUTRACE_SAMPLE_BUDGET  the most of one core the sampler may take\n"
            "                          (default 1%%, 10%% at 1000 Hz; 0: no bound):\n"
            "                          past it, the rate falls instead.\n"
            "  GPUTRACE_SAMPLE_THREADS all (default: every thread) or cuda (threads\n"
            "                          that called CUDA).\n"
            "  GPUTRACE_SAMPLE_NATIVE  blocked (default: a blocked thread's native\n"
            "                          stack), perf (also a running thread's stack,\n"
            "                          from perf events where permitted) or auto (perf,\n"
            "                          silent when refused).\n"
            "  GPUTRACE_CAPTURE_RANGE, GPUTRACE_CAPTURE_RANGE_END  as --capture-range\n"
            "                          and --capture-range-end.\n"
            "  GPUTRACE_MODE=standby, GPUTRACE_FLIGHT, GPUTRACE_TRIGGER  record on\n"
            "                          demand, keeping the last 30s (or 256MiB) in\n"
            "                          memory: docs/standby.md.\n"
            "\n"
            "exit status: COMMAND's; 127 if it was not found, 126 if it could not\n"
            "be run; 2 for a usage error or a missing libgputrace.so.\n",
            GT_DEFAULT_OUTPUT, GT_STACK_MAX_DEPTH, GT_DEFAULT_STACK_DEPTH, GT_DEFAULT_BUFFER_EVENTS);
}

/* The shim lives beside gputrace in the build tree and in PREFIX/lib once
 * installed; looking it up from /proc/self/exe keeps both working without
 * configuration. Returns 0 with an absolute path in `out`, else -1. */
static int gt_find_shim(char out[PATH_MAX])
{
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    if (n <= 0) {
        gt_err("cannot find own executable (/proc/self/exe): %s", strerror(errno));
        return -1;
    }
    exe[n] = 0;
    char *slash = strrchr(exe, '/');
    if (!slash)
        return -1;
    *slash = 0;
    static const char *const rel[] = {GT_SHIM_NAME, "../lib/" GT_SHIM_NAME};
    char cand[PATH_MAX + 32];
    for (size_t i = 0; i < sizeof(rel) / sizeof(rel[0]); i++) {
        snprintf(cand, sizeof(cand), "%s/%s", exe, rel[i]);
        /* realpath drops the "bin/.." so the preload entry reads plainly. */
        if (access(cand, R_OK) == 0 && realpath(cand, out))
            return 0;
    }
    gt_err("cannot find %s: looked for %s/%s and %s/../lib/%s", GT_SHIM_NAME, exe, GT_SHIM_NAME, exe,
           GT_SHIM_NAME);
    return -1;
}

/* The dynamic loader splits LD_PRELOAD at spaces and colons; looks for
 * `path` as a whole entry. */
static int gt_preload_has(const char *list, const char *path)
{
    size_t plen = strlen(path);
    const char *p = list;
    while (*p) {
        p += strspn(p, " :");
        size_t n = strcspn(p, " :");
        if (n == plen && strncmp(p, path, n) == 0)
            return 1;
        p += n;
    }
    return 0;
}

static int gt_set_preload(const char *shim)
{
    if (strpbrk(shim, " :")) {
        gt_err("%s is at a path with a space or colon, which LD_PRELOAD cannot hold: %s", GT_SHIM_NAME,
               shim);
        return -1;
    }
    const char *old = getenv("LD_PRELOAD");
    if (!old || !*old)
        return setenv("LD_PRELOAD", shim, 1);
    if (gt_preload_has(old, shim))
        return 0;
    size_t len = strlen(shim) + strlen(old) + 2;
    char *v = malloc(len);
    if (!v)
        return -1;
    /* First, so the shim's hooks win over any other preloaded wrapper. */
    snprintf(v, len, "%s:%s", shim, old);
    int rc = setenv("LD_PRELOAD", v, 1);
    free(v);
    return rc;
}

static volatile sig_atomic_t gt_child_pid;

static const int gt_fwd_signals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
#define GT_NFWD (sizeof(gt_fwd_signals) / sizeof(gt_fwd_signals[0]))

static void gt_forward(int sig, siginfo_t *info, void *uctx)
{
    (void)uctx;
    /* A signal the terminal raised (Ctrl-C, Ctrl-\, hangup) already went to
     * the whole foreground process group, the child included; sending it
     * again would make programs that treat a second Ctrl-C as "abort now"
     * skip their cleanup. */
    if (info && info->si_code == SI_KERNEL)
        return;
    pid_t pid = gt_child_pid;
    if (pid > 0)
        kill(pid, sig);
}

/* Parses a whole-string decimal in [lo, hi]. */
static int gt_parse_int(const char *s, long lo, long hi, long *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (!*s || *end || errno || v < lo || v > hi)
        return -1;
    *out = v;
    return 0;
}

/* Returns the option's value for "-o X", "-oX", "--output X" or
 * "--output=X" forms, advancing *i past a separate value; NULL when `arg`
 * is not this option. Sets *missing when the value is absent. */
static const char *gt_opt_value(int argc, char **argv, int *i, const char *shortopt, const char *longopt,
                                int *missing)
{
    const char *a = argv[*i];
    size_t ll = strlen(longopt);
    *missing = 0;
    if (strncmp(a, longopt, ll) == 0 && (a[ll] == 0 || a[ll] == '=')) {
        if (a[ll] == '=')
            return a + ll + 1;
    } else if (shortopt && strncmp(a, shortopt, 2) == 0) {
        if (a[2])
            return a + 2;
    } else {
        return NULL;
    }
    if (*i + 1 >= argc) {
        *missing = 1;
        return "";
    }
    return argv[++*i];
}

int gt_cmd_record(int argc, char **argv)
{
    const char *output = NULL, *depth = NULL, *crange = NULL, *crange_end = NULL, *max_size = NULL;
    int quiet = 0, windowed = 0, force = 0;
    uint64_t delay_ns = 0, duration_ns = 0;
    int i = 1;
    for (; i < argc; i++) {
        const char *a = argv[i];
        int missing;
        const char *v;
        if (strcmp(a, "--") == 0) {
            i++;
            break;
        }
        if (a[0] != '-' || a[1] == 0)
            break; /* the command: everything after it is its own */
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            gt_cmd_record_usage(stdout);
            return GT_EXIT_OK;
        }
        if (strcmp(a, "-q") == 0 || strcmp(a, "--quiet") == 0) {
            quiet = 1;
            continue;
        }
        if (strcmp(a, "--force") == 0) {
            force = 1;
            continue;
        }
        if ((v = gt_opt_value(argc, argv, &i, "-o", "--output", &missing))) {
            if (missing)
                return gt_usage_error("record", "option '%s' needs a PATTERN", a);
            output = v;
        } else if ((v = gt_opt_value(argc, argv, &i, NULL, "--delay", &missing)) ||
                   (v = gt_opt_value(argc, argv, &i, NULL, "--duration", &missing))) {
            int is_delay = strncmp(a, "--delay", 7) == 0;
            uint64_t ns;
            if (missing || gt_parse_window_length(v, &ns) < 0 || (!is_delay && ns == 0))
                return gt_usage_error("record", "%s needs a duration with its unit, such as 500ms, 10s or 5m%s", is_delay ? "--delay"
                                      : "--duration", is_delay ? "" : ", more than 0");
            *(is_delay ? &delay_ns : &duration_ns) = ns;
            windowed = 1;
        } else if ((v = gt_opt_value(argc, argv, &i, NULL, "--capture-range-end", &missing))) {
            struct gt_capture_range cr;
            char why[256];
            if (missing || gt_parse_capture_end(v, &cr, why, sizeof(why)) < 0)
                return gt_usage_error("record", "--capture-range-end '%s' %s", v,
                                      missing ? "needs stop, repeat[:N] or none" : why);
            crange_end = v;
        } else if ((v = gt_opt_value(argc, argv, &i, NULL, "--capture-range", &missing))) {
            struct gt_capture_range cr;
            char why[256];
            if (missing || gt_parse_capture_range(v, &cr, why, sizeof(why)) < 0)
                return gt_usage_error("record", "--capture-range '%s' %s", v,
                                      missing ? "needs cudaProfilerApi or nvtx:NAME[@DOMAIN]" : why);
            crange = v;
        } else if ((v = gt_opt_value(argc, argv, &i, NULL, "--max-size", &missing))) {
            uint64_t bytes;
            int last;
            if (missing || gt_parse_max_size(v, &bytes, &last) < 0)
                return gt_usage_error("record", "--max-size needs a size of 1MiB or more, such as 512MiB or 1GiB, "
                                      "optionally followed by :last");
            max_size = v;
        } else if ((v = gt_opt_value(argc, argv, &i, NULL, "--stack-depth", &missing))) {
            if (missing)
                return gt_usage_error("record", "option '%s' needs a number", a);
            depth = v;
        } else {
            return gt_usage_error("record", "unknown option '%s'", a);
        }
    }
    if (crange_end && !crange)
        return gt_usage_error("record", "--capture-range-end needs --capture-range");
    /* A capture range is the program's own window; --delay's is record's. */
    if (crange && windowed)
        return gt_usage_error("record", "--capture-range does not go with --delay or --duration");
    if (i >= argc)
        return gt_usage_error("record", "no command given");
    char **cmd = argv + i;

    /* Check settings here, where a mistake stops the run, rather than in
     * each traced process, where it only warns and falls back. */
    if (output) {
        char path[4096], err[256];
        struct gt_path_vars pv = {.pid = 1, .program = "x", .host = "x", .rank = "0"};
        if (gt_expand_output(output, &pv, path, sizeof(path), err, sizeof(err)) < 0)
            return gt_usage_error("record", "bad -o '%s': %s", output, err);
        if (strlen(output) >= sizeof(((struct gt_config *)0)->output))
            return gt_usage_error("record", "bad -o: pattern is too long");
    }
    /* Where the trace goes, checked before the command runs: a process
     * that cannot create it runs untraced, which is no way to learn of a
     * typo in -o. */
    if (gt_record_check_output(output ? output : GT_DEFAULT_OUTPUT, cmd[0], windowed || crange, force) < 0)
        return GT_EXIT_USAGE;
    if (depth) {
        long d;
        if (gt_parse_int(depth, 0, GT_STACK_MAX_DEPTH, &d) < 0)
            return gt_usage_error("record", "--stack-depth '%s' is not a whole number from 0 to %d", depth,
                                  GT_STACK_MAX_DEPTH);
    }

    char shim[PATH_MAX];
    if (gt_find_shim(shim) < 0 || gt_set_preload(shim) < 0)
        return GT_EXIT_USAGE;
    /* NVTX in the program loads the library this names and hands it its
     * ranges: the shim, unless another tool was given them already. */
    const char *nvtx = getenv("NVTX_INJECTION64_PATH");
    if (nvtx && *nvtx && strcmp(nvtx, shim) != 0) {
        fprintf(stderr, "gputrace: NVTX_INJECTION64_PATH is already set (%s); leaving it, so NVTX ranges are "
                        "not recorded\n", nvtx);
        /* said once: the shim in each process would say it again */
        setenv("GPUTRACE_NVTX_OTHER_TOOL_SAID", "1", 1);
    } else if (setenv("NVTX_INJECTION64_PATH", shim, 1) < 0) {
        gt_err("cannot set environment: %s", strerror(errno));
        return GT_EXIT_FAIL;
    }
    /* Each traced process lists its trace here, for the closing summary. */
    char list[PATH_MAX] = "";
    if (!quiet) {
        const char *tmp = getenv("TMPDIR");
        snprintf(list, sizeof(list), "%s/gputrace-record-XXXXXX", tmp && *tmp ? tmp : "/tmp");
        int lfd = mkstemp(list);
        if (lfd < 0 || setenv("GPUTRACE_RECORD_LIST", list, 1) < 0) {
            if (lfd >= 0)
                unlink(list);
            list[0] = 0;
        }
        if (lfd >= 0)
            close(lfd);
    }
    if ((output && setenv("GPUTRACE_OUTPUT", output, 1) < 0) ||
        (force && setenv("GPUTRACE_FORCE_OVERWRITE", "1", 1) < 0) ||
        (depth && setenv("GPUTRACE_STACK_DEPTH", depth, 1) < 0) ||
        (max_size && setenv("GPUTRACE_MAX_SIZE", max_size, 1) < 0) ||
        (windowed && setenv("GPUTRACE_MODE", "standby", 1) < 0) ||
        (crange && setenv("GPUTRACE_CAPTURE_RANGE", crange, 1) < 0) ||
        (crange && setenv("GPUTRACE_CAPTURE_RANGE_END", crange_end ? crange_end : "stop", 1) < 0)) {
        gt_err("cannot set environment: %s", strerror(errno));
        return GT_EXIT_FAIL;
    }

    /* Reports the exec failure's errno back, so the message comes from here
     * and is not confused with the command's own output. */
    int pfd[2];
    if (pipe2(pfd, O_CLOEXEC) < 0) {
        gt_err("pipe: %s", strerror(errno));
        return GT_EXIT_FAIL;
    }

    /* Blocked across fork so no forwarded signal is lost before the child's
     * pid is known. */
    sigset_t fwd, old;
    sigemptyset(&fwd);
    for (size_t k = 0; k < GT_NFWD; k++)
        sigaddset(&fwd, gt_fwd_signals[k]);
    sigprocmask(SIG_BLOCK, &fwd, &old);
    struct sigaction sa = {0}, saved[GT_NFWD];
    sa.sa_sigaction = gt_forward;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    for (size_t k = 0; k < GT_NFWD; k++) {
        sigaction(gt_fwd_signals[k], NULL, &saved[k]);
        /* An ignored signal (nohup, a background job of a script) stays
         * ignored: the child inherits that and needs nothing forwarded. */
        if (saved[k].sa_handler != SIG_IGN)
            sigaction(gt_fwd_signals[k], &sa, NULL);
    }

    struct timespec wall;
    clock_gettime(CLOCK_REALTIME, &wall); /* --delay counts from here */
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0) {
        gt_err("fork: %s", strerror(errno));
        return GT_EXIT_FAIL;
    }
    if (pid == 0) {
        /* The window is the command's own process's (not its children's):
         * it opens it itself, so no call made before record could reach
         * it is missed (preload/session/gt_session.c). */
        if (windowed) {
            char win[96];
            uint64_t start = (uint64_t)wall.tv_sec * 1000000000ull + (uint64_t)wall.tv_nsec;
            snprintf(win, sizeof(win), "%ld:%llu:%llu", (long)getpid(),
                     (unsigned long long)(delay_ns ? start + delay_ns : 0), (unsigned long long)duration_ns);
            setenv("GPUTRACE_RECORD_WINDOW", win, 1);
        }
        for (size_t k = 0; k < GT_NFWD; k++)
            sigaction(gt_fwd_signals[k], &saved[k], NULL);
        sigprocmask(SIG_SETMASK, &old, NULL);
        close(pfd[0]);
        execvp(cmd[0], cmd);
        int e = errno;
        ssize_t w = write(pfd[1], &e, sizeof(e));
        (void)w;
        _exit(e == ENOENT ? 127 : 126);
    }
    gt_child_pid = pid;
    sigprocmask(SIG_SETMASK, &old, NULL);
    close(pfd[1]);

    int exec_errno = 0;
    ssize_t r;
    do
        r = read(pfd[0], &exec_errno, sizeof(exec_errno));
    while (r < 0 && errno == EINTR);
    close(pfd[0]);

    int status;
    pid_t w;
    do
        w = waitpid(pid, &status, 0);
    while (w < 0 && errno == EINTR);
    if (w < 0) {
        gt_err("waitpid: %s", strerror(errno));
        return GT_EXIT_FAIL;
    }
    if (r == (ssize_t)sizeof(exec_errno)) {
        if (list[0])
            unlink(list);
        gt_err("cannot run %s: %s", cmd[0], strerror(exec_errno));
        return exec_errno == ENOENT ? 127 : 126;
    }
    int code = GT_EXIT_FAIL;
    if (WIFEXITED(status)) {
        code = WEXITSTATUS(status);
    } else if (WIFSIGNALED(status)) {
        gt_err("%s killed by signal %d", cmd[0], WTERMSIG(status));
        code = 128 + WTERMSIG(status);
    }
    if (list[0]) {
        const char *cr = getenv("GPUTRACE_CAPTURE_RANGE"); /* set above, or by the user */
        gt_record_summary(list, 1, cr && *cr ? cr : NULL); /* whatever the command's status */
        unlink(list);
    }
    return code;
}
