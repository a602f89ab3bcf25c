/* gt_config.h: GPUTRACE_* settings and the output path pattern. Pure
 * functions of their inputs, so the tests drive them directly. */
#ifndef GT_CONFIG_H
#define GT_CONFIG_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define GT_DEFAULT_OUTPUT "gputrace-%n-%p.db"
#define GT_DEFAULT_STACK_DEPTH 32
#define GT_STACK_MAX_DEPTH 128
#define GT_DEFAULT_BUFFER_EVENTS 65536u

struct gt_config {
    char output[1024];         /* the pattern, unexpanded */
    int stack_depth;           /* 0: off */
    uint32_t buffer_events;    /* per thread ring, a power of two */
    int gpu_timing;            /* 1: CUPTI (GPUTRACE_GPU_TIMING=cupti), 0: off */
    int python;                /* 1: Python stacks where Python runs (GPUTRACE_PYTHON=1), 0: off */
    int nvtx;                  /* 1: NVTX ranges and marks recorded (GPUTRACE_NVTX=1), 0: off */
    int standby;               /* GPUTRACE_MODE: 0 record (from the first call), 1 standby (windows on demand) */
    int force_overwrite;       /* GPUTRACE_FORCE_OVERWRITE=1: an earlier run's trace at the name is replaced */
    /* GPUTRACE_RECORD_WINDOW=PID:AT_NS:DURATION_NS, set by `gputrace record
     * --delay/--duration` for the command's process: in standby, it opens
     * its one window itself, at its first CUDA call or at AT_NS (wall
     * clock, 0: at once) if later, for DURATION_NS (0: to the end). */
    long record_window_pid;    /* 0: none */
    uint64_t record_window_at_ns, record_window_dur_ns;
    /* Automatic windows in standby (GPUTRACE_TRIGGER, rules separated by
     * commas): step-time>Kx, a step over K times the running median opens
     * one (0: no such rule); idle>P%, a GPU idle more than P% of a second
     * (0: no such rule). */
    double trigger_step_factor;
    int trigger_idle_pct;
    uint64_t trigger_hang_ns;      /* hang>Ns: no call ended and no NVTX event for this long (0: no such rule) */
    /* The flight recorder (GPUTRACE_FLIGHT, standby only): the last
     * flight_ns of calls (0: as many as fit) in at most flight_bytes of
     * rings (0: no flight recorder). */
    uint64_t flight_ns, flight_bytes;
    /* GPUTRACE_MAX_SIZE=SIZE[:stop|:last]: a trace file's bound (0: none);
     * at it, recording stops (stop), or only the last part is kept (last). */
    uint64_t max_size_bytes;
    int max_size_keep_last;
    uint64_t trigger_cooldown_ns;  /* GPUTRACE_TRIGGER_COOLDOWN, default 10 minutes */
    uint64_t trigger_duration_ns;  /* GPUTRACE_TRIGGER_DURATION, default 10 s */
    char step_range[128];          /* GPUTRACE_STEP_RANGE: a glob; "": the built-in rule */
    int sample_hz;             /* GPUTRACE_SAMPLE_HZ: host samples a second, 0 off, at most 1000 */
    int sample_all;            /* GPUTRACE_SAMPLE_THREADS: 0 cuda (threads that called CUDA), 1 all (default) */
    int sample_native;         /* GPUTRACE_SAMPLE_NATIVE: GT_NATIVE_BLOCKED, _PERF or _AUTO */
    int sample_budget_bp;      /* GPUTRACE_SAMPLE_BUDGET: the sampler's share of one core, in
                                * hundredths of a percent (100: 1%, the default); 0: no bound */
    /* GPUTRACE_CAPTURE_RANGE (and _END): windows opened by the program
     * itself (nsys's --capture-range); set, it implies standby. */
    struct gt_capture_range {
        int kind;              /* GT_CAPTURE_NONE, _PROFILER (cudaProfilerStart/Stop), _NVTX */
        char name[128];        /* nvtx: the range name, a glob */
        char domain[128];      /* nvtx: "" the default domain, "*" any, else a domain's name */
        int end;               /* GT_CAPTURE_END_STOP, _REPEAT, _NONE */
        long max;              /* repeat: the most ranges recorded, 0 no limit */
    } capture;
};
enum { GT_CAPTURE_NONE, GT_CAPTURE_PROFILER, GT_CAPTURE_NVTX };
enum { GT_CAPTURE_END_STOP, GT_CAPTURE_END_REPEAT, GT_CAPTURE_END_NONE };

/* "cudaProfilerApi" or "nvtx:NAME[@DOMAIN]" (DOMAIN `*`: any domain); and
 * "stop", "repeat", "repeat:N" (N from 1) or "none". 0, or -1 with why in
 * err (for `gputrace record`'s usage error and the shim's warning). */
int gt_parse_capture_range(const char *v, struct gt_capture_range *out, char *err, size_t err_len);
int gt_parse_capture_end(const char *v, struct gt_capture_range *out, char *err, size_t err_len);
/* GPUTRACE_SAMPLE_NATIVE: a blocked thread's native stack only (the
 * default: unwound, gt_sampler_unwind.h); or also a running thread's callchain from perf_event_open,
 * said on stderr when the system refuses it (perf) or not (auto). */
enum { GT_NATIVE_BLOCKED, GT_NATIVE_PERF, GT_NATIVE_AUTO };
#define GT_DEFAULT_SAMPLE_HZ 100
#define GT_MAX_SAMPLE_HZ 1000
#define GT_DEFAULT_SAMPLE_BUDGET_BP 100

#define GT_DEFAULT_TRIGGER_COOLDOWN_NS (600ull * 1000000000ull)
#define GT_DEFAULT_TRIGGER_DURATION_NS (10ull * 1000000000ull)

/* "250ms", "10s", "5m", "1h", "500us", "100ns" (a bare number: seconds).
 * 0, or -1 when it is not a duration above zero. */
int gt_parse_duration_ns(const char *s, uint64_t *out);

/* Whether an NVTX range name names a training step: `glob` (fnmatch) when
 * set, else the built-in rule (docs/report.md, Steps): case aside, `step`,
 * `train_step`, `training_step` or `ProfilerStep`, alone or followed by a
 * number, with at most one of `#`, `_`, space, `-` or `:` between
 * (`step 12`, `step_12`, `ProfilerStep#12`, `step12`). */
int gt_is_step_name(const char *name, const char *glob);

/* Reads settings through `get` (getenv in the shim). Each bad value falls
 * back to its default and adds a line to `warnings` (NUL-separated lines,
 * count returned). */
typedef const char *(*gt_getenv_fn)(const char *name);
int gt_config_load(struct gt_config *c, gt_getenv_fn get, char *warnings, size_t warnings_len);

/* gt_config_flight.c. Sizes: "256MiB", "1G", "512KiB" (binary; a unit is
 * required). GPUTRACE_FLIGHT: a duration with its unit, a size, or both
 * separated by a comma. GPUTRACE_MAX_SIZE: a size, then ":stop" (the
 * default) or ":last". The hang rule: "hang>60s". Each 0, or -1. */
#define GT_DEFAULT_FLIGHT_BYTES (256ull << 20)
#define GT_FLIGHT_MIN_BYTES (1ull << 20)
#define GT_MAX_SIZE_MIN_BYTES (1ull << 20)
int gt_parse_size_bytes(const char *s, uint64_t *out);
int gt_parse_flight(const char *v, uint64_t *ns, uint64_t *bytes);
int gt_parse_max_size(const char *v, uint64_t *bytes, int *keep_last);
int gt_parse_hang_rule(const char *v, uint64_t *ns);
/* Reads GPUTRACE_FLIGHT and GPUTRACE_MAX_SIZE into c (after c->standby);
 * a bad value is said through warn (name, value, what follows). */
typedef void (*gt_warn_fn)(void *arg, const char *name, const char *value, const char *why);
void gt_config_flight_load(struct gt_config *c, gt_getenv_fn get, gt_warn_fn warn, void *arg);

struct gt_path_vars {
    long pid;
    const char *program;  /* %n */
    const char *host;     /* %h */
    const char *rank;     /* %r */
    long window;          /* %w: the standby window's number, from 1; 1 in record mode */
};

/* Expands %p %n %h %r and %% in `pattern`. Returns 0, or -1 with a reason
 * in `err` (unknown %-sequence, result too long, empty). */
int gt_expand_output(const char *pattern, const struct gt_path_vars *v, char *out, size_t out_len,
                     char *err, size_t err_len);

/* The pattern a standby process writes its windows to: `pattern` itself
 * when it holds %w, else with -w%w before its extension (t.db: t-w%w.db),
 * so no window overwrites another. Returns -1 if it does not fit. */
int gt_output_per_window(const char *pattern, char *out, size_t out_len);

/* The rank from the usual launcher variables (torchrun, MPI, Slurm); "0"
 * when none is set. */
const char *gt_rank_from_env(gt_getenv_fn get);
/* The variable the rank came from ("RANK", "SLURM_PROCID"...), NULL if none is set. */
const char *gt_rank_var_from_env(gt_getenv_fn get);

#endif
