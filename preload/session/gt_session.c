/* gt_session.c: the session: started by the first recorded CUDA call or
 * NVTX call (hot/gt_nvtx.c; a process that makes neither gets no file),
 * ended at exit, restarted in a fork child that uses CUDA. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/gt_config.h"
#include "base/gt_base.h"
#include "hot/gt_call.h"
#include "hot/gt_crange.h"
#include "cupti/gt_cupti.h"
#include "hot/gt_names.h"
#include "hot/gt_python.h"
#include "hot/gt_ranges.h"
#include "hot/gt_ring.h"
#include "session/gt_control.h"
#include "session/gt_flight.h"
#include "session/gt_idle.h"
#include "session/gt_signals.h"
#include "hot/gt_stacks.h"
#include "hot/gt_steps.h"
#include "sampler/gt_sampler.h"
#include "session/gt_session.h"
#include "writer/gt_writer.h"

static pthread_mutex_t gt_session_lock = PTHREAD_MUTEX_INITIALIZER;
static pid_t gt_session_pid; /* the process whose trace is open */
static _Atomic int gt_exit_finishing;

static const char *gt_getenv(const char *name)
{
    return getenv(name);
}

/* Under `gputrace record`: adds this process's trace to the list the
 * closing summary reads (one append, atomic for a line this short); "!"
 * for a process that could not create its trace, and said why. */
static void gt_list_trace(const char *path)
{
    const char *list = getenv("GPUTRACE_RECORD_LIST");
    if (!list || !*list)
        return;
    char line[PATH_MAX + 2], cwd[PATH_MAX];
    int n;
    if (path[0] == '/' || path[0] == '!' || !getcwd(cwd, sizeof(cwd)))
        n = snprintf(line, sizeof(line), "%s\n", path);
    else
        n = snprintf(line, sizeof(line), "%s/%s\n", cwd, path);
    if (n <= 0 || n >= (int)sizeof(line))
        return;
    int fd = open(list, O_WRONLY | O_APPEND | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0)
        return;
    ssize_t w = write(fd, line, (size_t)n);
    (void)w;
    close(fd);
}

/* The settings, read at the first CUDA call; a standby process opens each
 * window with them. */
static struct gt_config gt_session_cfg;
static char gt_session_host[256];
static long gt_session_window; /* windows opened so far */
static int gt_session_hold;    /* the window waits for a step to start (trigger --steps) */
static int gt_session_dump;    /* a crash's window: the rings' history only, no CUPTI, no samples */
static int gt_session_stuck;   /* a hang's or a crash's window: the calls in flight at its end go in */

/* Opens the trace at `pattern` (expanded) and starts recording. Returns
 * 0, or -1 with the state left as it was and the reason in err. */
static int gt_session_open_trace(const char *pattern, long window, const char *why, char *path, size_t path_len,
                                 char *err, size_t err_len)
{
    const struct gt_config *cfg = &gt_session_cfg;
    struct gt_path_vars vars = {(long)getpid(), program_invocation_short_name, gt_session_host,
                                gt_rank_from_env(gt_getenv), window};
    if (gt_expand_output(pattern, &vars, path, path_len, err, err_len) < 0) {
        gt_warn("GPUTRACE_OUTPUT: %s; using %s", err, GT_DEFAULT_OUTPUT);
        gt_expand_output(GT_DEFAULT_OUTPUT, &vars, path, path_len, err, err_len);
    }
    /* Another process's trace at that name is never written into: this
     * one's goes beside it (the writer says where). */
    if (gt_writer_open(path, path_len, cfg, err, err_len) < 0) {
        gt_list_trace("!"); /* record's summary: calls were made, the caller says why no trace */
        return -1;
    }
    uint64_t since = gt_now_ns();
    /* A flight recorder's window starts with what the rings hold. */
    int flight = atomic_load(&gt_state) == GT_STATE_FLIGHT;
    gt_session_stuck = flight && (gt_session_dump || (why && strncmp(why, "hang>", 5) == 0));
    if (flight && !gt_session_hold) {
        /* Its start is known once the rings stop writing over, below. */
        gt_writer_set_meta("window_trigger", why ? why : "gputrace trigger");
    } else if (cfg->standby) {
        /* A window by steps records nothing until its first step starts. */
        gt_writer_set_window(window, gt_session_hold ? UINT64_MAX : since);
        gt_writer_set_meta("window_trigger", why ? why : "gputrace trigger");
    }
    gt_list_trace(path);
    char nocupti[512];
    if (gt_session_stuck) {
        /* A hung kernel may never let CUPTI's flush return (the simulated
         * GPU's does not), and a crash leaves no time for it. */
        gt_writer_set_gpu_timing("none", "the flight recorder's calls only (a crash's, a hang's or an exit's window)");
    } else if (gt_cupti_start(cfg->gpu_timing ? "cupti" : "off", nocupti, sizeof(nocupti))) {
        gt_writer_set_gpu_timing("cupti", gt_cupti_library());
        gt_writer_set_meta("cupti_api_records", gt_cupti_api_records_kind());
    } else {
        gt_writer_set_gpu_timing("none", nocupti);
        /* Asked for and missing is worth a line; turned off is not. */
        if (cfg->gpu_timing)
            gt_warn("GPU times not recorded: %s; tracing host side only", nocupti);
    }
    if (flight) {
        /* The writer drains from here on: no more writing over, so the
         * instant from which the rings hold every call stays put. (Until
         * the writer's first pass, a full ring drops and counts.) */
        gt_flight_handoff();
        if (!gt_session_hold) {
            uint64_t now = gt_now_ns();
            since = gt_flight_window_start(now);
            gt_writer_set_window(window, since);
            gt_flight_window_meta(since, now);
            if (!cfg->standby) /* GPUTRACE_MAX_SIZE=...:last at exit: a record run's trace */
                gt_writer_set_meta("mode", "record");
        }
    }
    if (gt_writer_start() < 0) {
        gt_cupti_pause();
        gt_writer_stop(0);
        if (flight)
            gt_flight_resume();
        snprintf(err, err_len, "cannot start the writer thread");
        return -1;
    }
    gt_session_pid = getpid();
    atomic_store(&gt_state, GT_STATE_ACTIVE);
    /* After the switch: a call that starts from here on is recorded. */
    if (cfg->standby && !gt_session_hold && !flight)
        gt_writer_window_bounds(gt_now_ns(), 0);
    gt_signals_install();
    char swhy[256];
    if (!gt_session_dump &&
        gt_sampler_start(cfg->sample_hz, cfg->sample_all, cfg->sample_native, cfg->sample_budget_bp, swhy,
                         sizeof(swhy)) < 0)
        gt_warn("host samples not recorded: %s", swhy);
    return 0;
}

/* A capture range's window (hot/gt_crange.h), opened and closed on the
 * program's thread that starts and ends the range. */
static int gt_session_capture_open(const char *why)
{
    static _Atomic int said;
    char path[1024], err[512];
    if (gt_session_window_open(why, path, sizeof(path), err, sizeof(err)) > 0)
        return 0;
    /* A window `gputrace trigger` opened records the range anyway; any
     * other failure (an unwritable path) is said once, not per range. */
    if (atomic_load(&gt_state) != GT_STATE_ACTIVE && !atomic_exchange(&said, 1))
        gt_warn("capture range not recorded: %s", err);
    return -1;
}

static void gt_session_capture_close(void)
{
    gt_session_window_close();
}

static void gt_session_record_window(const struct gt_config *cfg);

static void gt_session_count_one(const struct gt_event *e, void *arg)
{
    (void)e;
    (void)arg;
}

static void gt_session_start_locked(void)
{
    struct gt_config *cfg = &gt_session_cfg;
    char warnings[2048];
    int nwarn = gt_config_load(cfg, gt_getenv, warnings, sizeof(warnings));
    for (int i = 0, off = 0; i < nwarn; i++) {
        gt_warn("%s", warnings + off);
        off += (int)strlen(warnings + off) + 1;
    }
    if (gethostname(gt_session_host, sizeof(gt_session_host)) != 0)
        gt_session_host[0] = 0;
    gt_session_host[sizeof(gt_session_host) - 1] = 0;
    gt_stacks_init(cfg->stack_depth);
    char pywhy[256] = "";
    if (cfg->python && !gt_python_init(cfg->stack_depth, pywhy, sizeof(pywhy)) && pywhy[0] && cfg->stack_depth > 0)
        gt_warn("Python call sites not recorded: %s; native stacks only", pywhy);
    gt_ring_configure(cfg->buffer_events, 24ull << 20, gt_writer_wake);
    char path[1024], err[1024];
    if (cfg->standby) {
        gt_session_window = 0;
        if (gt_control_start(err, sizeof(err)) < 0) {
            if (!cfg->capture.kind) {
                gt_warn("standby: %s; not tracing this process", err);
                atomic_store(&gt_state, GT_STATE_DISABLED);
                return;
            }
            /* The program's own ranges open its windows without the channel. */
            gt_warn("standby: %s; capture ranges still record, gputrace trigger cannot", err);
        }
        if (cfg->capture.kind)
            gt_crange_configure(&cfg->capture, gt_session_capture_open, gt_session_capture_close);
        /* The step rule serves `trigger --steps` too, with or without a
         * GPUTRACE_TRIGGER rule. */
        gt_steps_configure(cfg->trigger_step_factor, cfg->trigger_cooldown_ns, cfg->step_range, gt_control_fire);
        if (cfg->trigger_idle_pct &&
            gt_idle_start(cfg->trigger_idle_pct, gt_control_fire, err, sizeof(err)) < 0)
            gt_warn("GPUTRACE_TRIGGER=idle>%d%%: %s; the idle rule is off", cfg->trigger_idle_pct, err);
        int flight = 0;
        if (cfg->flight_bytes && !(flight = gt_flight_start(cfg, 0, err, sizeof(err)) == 0))
            gt_warn("GPUTRACE_FLIGHT: %s; no flight recorder", err);
        if (cfg->trigger_hang_ns && !flight)
            gt_warn("GPUTRACE_TRIGGER=hang>...: the hang rule watches the flight recorder (GPUTRACE_FLIGHT); "
                    "it is off");
        atomic_store(&gt_state, flight ? GT_STATE_FLIGHT : GT_STATE_STANDBY);
        if (cfg->record_window_pid == (long)getpid())
            gt_session_record_window(cfg);
        return;
    }
    /* GPUTRACE_MAX_SIZE=SIZE:last: the run goes into the rings, the last
     * part they hold into the trace at exit (gt_session_keep_last). */
    if (cfg->max_size_keep_last) {
        if (gt_flight_start(cfg, 1, err, sizeof(err)) == 0) {
            atomic_store(&gt_state, GT_STATE_FLIGHT);
            return;
        }
        gt_warn("GPUTRACE_MAX_SIZE: %s; recording everything", err);
    }
    if (gt_session_open_trace(cfg->output, 1, NULL, path, sizeof(path), err, sizeof(err)) < 0) {
        gt_warn("%s; not tracing this process", err);
        atomic_store(&gt_state, GT_STATE_DISABLED);
    }
}

/* At exit, under the session lock: a record run with GPUTRACE_MAX_SIZE=
 * SIZE:last writes the last part its rings hold. */
static void gt_session_keep_last(void)
{
    const struct gt_config *cfg = &gt_session_cfg;
    if (cfg->standby || !cfg->max_size_keep_last || atomic_load(&gt_state) != GT_STATE_FLIGHT)
        return;
    char path[1024], err[1024];
    gt_session_dump = 1; /* no CUPTI, no samples: the rings' calls are all there is */
    if (gt_session_open_trace(cfg->output, 1, "exit (GPUTRACE_MAX_SIZE=...:last)", path, sizeof(path), err,
                              sizeof(err)) < 0)
        gt_warn("%s; the last part of the run is not written", err);
    gt_session_dump = 0;
}

uint64_t gt_session_trigger_duration_ns(void)
{
    return gt_session_cfg.trigger_duration_ns;
}

uint64_t gt_session_trigger_cooldown_ns(void)
{
    return gt_session_cfg.trigger_cooldown_ns;
}

/* A window by steps: its first step's start and its last step's end, on
 * the program's thread (gt_steps.h). */
static void gt_session_step_bound(int end, uint64_t t)
{
    if (!end) {
        gt_writer_window_bounds(t, 0);
        return;
    }
    gt_writer_window_bounds(0, t);
    gt_control_steps_done();
}

int gt_session_window_open_steps(uint64_t nsteps, char *path, size_t path_len, char *err, size_t err_len)
{
    pthread_mutex_lock(&gt_session_lock);
    gt_session_hold = 1;
    pthread_mutex_unlock(&gt_session_lock);
    char why[64];
    snprintf(why, sizeof(why), "gputrace trigger --steps %llu", (unsigned long long)nsteps);
    int n = gt_session_window_open(why, path, path_len, err, err_len);
    pthread_mutex_lock(&gt_session_lock);
    gt_session_hold = 0;
    if (n > 0)
        gt_steps_arm(nsteps, gt_session_step_bound);
    pthread_mutex_unlock(&gt_session_lock);
    return n;
}

uint64_t gt_session_window_steps_end(void)
{
    uint64_t done = gt_steps_disarm();
    /* No step started: an empty window, bounded at its close. */
    if (!done)
        gt_writer_window_bounds(gt_now_ns(), 0);
    return done;
}

static int gt_session_window_open_locked(const char *why, char *path, size_t path_len, char *err, size_t err_len)
{
    int rc = -1;
    int st = atomic_load(&gt_state);
    if (st != GT_STATE_STANDBY && st != GT_STATE_FLIGHT) {
        snprintf(err, err_len, atomic_load(&gt_state) == GT_STATE_ACTIVE ? "a window is already open"
                                                                         : "the process is not in standby");
    } else {
        char pattern[1100];
        const struct gt_config *c = &gt_session_cfg;
        /* A capture range that stops after one range, and no automatic
         * window, make one window at most: it takes the name given (-o
         * t.db writes t.db). A later window (`gputrace trigger`) is named
         * per window, as ever. */
        int one = c->output[0] && c->capture.kind != GT_CAPTURE_NONE && c->capture.end == GT_CAPTURE_END_STOP &&
                  !c->trigger_step_factor && !c->trigger_idle_pct && gt_session_window == 0;
        if (one && snprintf(pattern, sizeof(pattern), "%s", c->output) < (int)sizeof(pattern))
            ;
        else if (gt_output_per_window(c->output, pattern, sizeof(pattern)) < 0)
            snprintf(pattern, sizeof(pattern), "%s", GT_DEFAULT_OUTPUT "-w%w");
        rc = gt_session_open_trace(pattern, gt_session_window + 1, why, path, path_len, err, err_len);
        if (rc == 0)
            rc = (int)++gt_session_window;
    }
    return rc;
}

int gt_session_window_open(const char *why, char *path, size_t path_len, char *err, size_t err_len)
{
    pthread_mutex_lock(&gt_session_lock);
    int rc = gt_session_window_open_locked(why, path, path_len, err, err_len);
    pthread_mutex_unlock(&gt_session_lock);
    return rc;
}

/* `gputrace record --delay/--duration`'s window, in the command's own
 * process (GPUTRACE_RECORD_WINDOW): due already, it opens here, on the
 * first CUDA call's thread, so that call is its first; else the control
 * thread opens it when due. The control thread closes it. */
static void gt_session_record_window(const struct gt_config *cfg)
{
    struct timespec rt;
    clock_gettime(CLOCK_REALTIME, &rt);
    uint64_t wall = (uint64_t)rt.tv_sec * 1000000000ull + (uint64_t)rt.tv_nsec;
    if (cfg->record_window_at_ns > wall) {
        gt_control_plan_window(cfg->record_window_at_ns, cfg->record_window_dur_ns, 0);
        return;
    }
    char path[1024], err[512];
    int n = gt_session_window_open_locked("gputrace record", path, sizeof(path), err, sizeof(err));
    if (n < 0)
        gt_warn("%s; not tracing this process", err);
    else
        gt_control_plan_window(0, cfg->record_window_dur_ns, n);
}

static void gt_session_window_close_locked(void)
{
    if (atomic_load(&gt_state) == GT_STATE_ACTIVE) {
        /* Calls from here on pass through; one already past its check
         * may still reach its ring, and is left out of the next window. */
        /* Before the switch: a call that ended by then is in the trace;
         * one still running (a hang's) goes in as such (result -1). */
        uint64_t end = gt_now_ns();
        if (gt_session_stuck)
            gt_flight_push_inflight(end);
        gt_writer_window_bounds(0, end);
        atomic_store(&gt_state, GT_STATE_STANDBY);
        gt_sampler_stop();
        gt_writer_settle(gt_session_stuck ? 0 : 1000);
        gt_cupti_pause();
        gt_writer_stop(1);
        gt_cupti_release_buffers();
        gt_session_stuck = 0;
        if (gt_flight_on()) {
            gt_flight_resume();
            atomic_store(&gt_state, GT_STATE_FLIGHT);
        }
    }
}

void gt_session_window_close(void)
{
    pthread_mutex_lock(&gt_session_lock);
    gt_session_window_close_locked();
    pthread_mutex_unlock(&gt_session_lock);
}

void gt_session_window_dump(const char *why)
{
    pthread_mutex_lock(&gt_session_lock);
    gt_session_dump = 1;
    if (atomic_load(&gt_state) == GT_STATE_FLIGHT) {
        char path[1024], err[512];
        if (gt_session_window_open_locked(why, path, sizeof(path), err, sizeof(err)) < 0)
            gt_warn("%s: the flight recorder's window not written: %s", why, err);
    }
    gt_session_window_close_locked();
    gt_session_dump = 0;
    pthread_mutex_unlock(&gt_session_lock);
}

int gt_session_flight_look(uint64_t *events, int *inflight)
{
    /* Under the lock, in FLIGHT: no writer runs, so no ring is freed. */
    if (pthread_mutex_trylock(&gt_session_lock) != 0)
        return -1;
    int rc = -1;
    if (atomic_load(&gt_state) == GT_STATE_FLIGHT) {
        *events = gt_ring_progress();
        *inflight = gt_ring_inflight_each(gt_session_count_one, NULL);
        rc = 0;
    }
    pthread_mutex_unlock(&gt_session_lock);
    return rc;
}

/* On the program's thread, inside its first recorded CUDA call and before
 * that call's clock starts: what it costs the program is recorded apart
 * (meta tracer_startup_ns), never as the call's time. */
static void gt_session_start(void)
{
    uint64_t t0 = gt_now_ns();
    pthread_mutex_lock(&gt_session_lock);
    if (atomic_load(&gt_state) == GT_STATE_IDLE) {
        gt_session_start_locked();
        if (atomic_load(&gt_state) == GT_STATE_ACTIVE)
            gt_writer_note_startup(gt_now_ns() - t0);
    }
    pthread_mutex_unlock(&gt_session_lock);
}

void (*const gt_call_starter)(void) = gt_session_start;

static void gt_atexit(void)
{
    int was_busy = gt_tls_busy;
    gt_tls_busy = 1;
    pthread_mutex_lock(&gt_session_lock);
    gt_session_keep_last();
    if (atomic_load(&gt_state) == GT_STATE_ACTIVE) {
        gt_ring_release_held(); /* this thread's run of polls, if one is open */
        atomic_store(&gt_state, GT_STATE_FINISHED);
        gt_sampler_stop();
        gt_cupti_end();
        gt_writer_stop(1);
    }
    pthread_mutex_unlock(&gt_session_lock);
    gt_control_stop();
    gt_idle_stop();
    gt_tls_busy = was_busy;
}

/* fork: hold every tracer lock across it so the child inherits them free
 * and the tables they guard whole. */
static void gt_fork_prepare(void)
{
    pthread_mutex_lock(&gt_session_lock);
    /* Before the names and ranges locks: the writer may need them to
     * finish the pass it is in. */
    gt_writer_fork_prepare();
    gt_names_fork_lock();
    gt_ranges_fork_lock();
}

static void gt_fork_parent(void)
{
    gt_ranges_fork_unlock();
    gt_names_fork_unlock();
    gt_writer_fork_release();
    pthread_mutex_unlock(&gt_session_lock);
}

static void gt_fork_child(void)
{
    gt_ranges_fork_unlock();
    gt_names_fork_unlock();
    gt_writer_fork_release();
    pthread_mutex_unlock(&gt_session_lock);
    gt_session_after_fork_child();
}

int gt_finish_at_exit(void)
{
    if (gt_tls_busy || atomic_load(&gt_state) != GT_STATE_ACTIVE || getpid() != gt_session_pid ||
        atomic_exchange(&gt_exit_finishing, 1))
        return 0;
    int saved = errno;
    gt_tls_busy = 1;
    gt_ring_release_held(); /* not inside a hook of ours on this thread (checked above) */
    gt_writer_finish_on_signal(GT_FINISH_EXIT);
    int done = gt_writer_wait_finished(5) == 0;
    gt_tls_busy = 0;
    errno = saved;
    return done ? 1 : 2;
}

int gt_finish_before_exec(void)
{
    /* The new image opens its own channel; the socket is this image's. */
    gt_control_stop();
    return gt_finish_at_exit();
}

void gt_exec_returned(int finished)
{
    if (!finished) {
        /* A standby process whose exec failed: its channel was closed for
         * the image that never came; it opens a new one. */
        if (atomic_load(&gt_state) == GT_STATE_STANDBY) {
            char err[512];
            if (gt_control_restart(err, sizeof(err)) < 0) {
                gt_warn("standby: %s; not tracing this process", err);
                atomic_store(&gt_state, GT_STATE_DISABLED);
            }
        }
        return;
    }
    /* Reaped only when it is known to have finished: a wedged writer would
     * hang the join. */
    if (finished == 1)
        gt_writer_join_finished();
    if (atomic_exchange(&gt_state, GT_STATE_DISABLED) != GT_STATE_DISABLED)
        gt_warn("exec failed after this process's trace was finished; the rest of the process is not traced");
}

void gt_session_after_fork_child(void)
{
    gt_writer_after_fork_child();
    gt_cupti_after_fork_child();
    gt_tls_ext_ahead = 0; /* the forking thread's, on the parent's CUPTI: not to be popped here */
    gt_ring_after_fork_child();
    gt_sampler_after_fork_child();
    gt_idle_after_fork_child();
    gt_flight_after_fork_child();
    atomic_store(&gt_exit_finishing, 0);
    /* A child that uses CUDA gets its own trace, named by its own pid; a
     * standby child its own channel, at its first CUDA call (the parent's
     * control thread did not come across the fork). */
    gt_control_after_fork_child();
    gt_steps_off(); /* configured again with the child's own channel */
    gt_crange_reset(); /* and its own capture ranges */
    int st = atomic_load(&gt_state);
    if (st == GT_STATE_ACTIVE || st == GT_STATE_STANDBY || st == GT_STATE_FLIGHT)
        atomic_store(&gt_state, GT_STATE_IDLE);
}

__attribute__((constructor)) static void gt_init(void)
{
    pthread_atfork(gt_fork_prepare, gt_fork_parent, gt_fork_child);
    atexit(gt_atexit);
    gt_nvtx_env_claim();
}
