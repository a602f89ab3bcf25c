/* gt_config.c: settings parsing and output path expansion. */
#include <ctype.h>
#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/gt_config.h"

static void gt_add_warning(char *buf, size_t len, int *count, const char *fmt, const char *name,
                           const char *value, const char *fallback)
{
    size_t used = 0;
    for (int i = 0; i < *count; i++)
        used += strlen(buf + used) + 1;
    if (used < len) {
        snprintf(buf + used, len - used, fmt, name, value, fallback);
        (*count)++;
    }
}

struct gt_warn_to {
    char *buf;
    size_t len;
    int *count;
};

static void gt_warn_into(void *arg, const char *name, const char *value, const char *why)
{
    struct gt_warn_to *w = arg;
    gt_add_warning(w->buf, w->len, w->count, "%s='%s' %s", name, value, why);
}

/* Whole-string decimal in [lo, hi]. */
static int gt_parse_long(const char *s, long lo, long hi, long *out)
{
    if (!s || !*s)
        return -1;
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || *end || end == s || v < lo || v > hi)
        return -1;
    *out = v;
    return 0;
}

/* "1", "1%", "0.5%": a percentage from 0 to 100, in hundredths of a
 * percent (rounded to the nearest). */
static int gt_parse_percent_bp(const char *s, long *out)
{
    if (!s || !*s || *s == '-' || *s == '+' || *s == ' ')
        return -1;
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || (*end && strcmp(end, "%") != 0) || !(v >= 0 && v <= 100))
        return -1;
    *out = (long)(v * 100 + 0.5);
    return 0;
}

int gt_parse_duration_ns(const char *s, uint64_t *out)
{
    if (!s || !*s || *s == '-')
        return -1;
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || !(v > 0))
        return -1;
    static const struct {
        const char *unit;
        double ns;
    } units[] = {{"", 1e9}, {"s", 1e9}, {"ms", 1e6}, {"us", 1e3}, {"ns", 1}, {"m", 60e9}, {"min", 60e9},
                 {"h", 3600e9}};
    for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
        if (strcmp(end, units[i].unit) == 0) {
            double ns = v * units[i].ns;
            if (ns < 1 || ns > 1e18)
                return -1;
            *out = (uint64_t)ns;
            return 0;
        }
    return -1;
}

int gt_is_step_name(const char *name, const char *glob)
{
    if (!name)
        return 0;
    if (glob && *glob)
        return fnmatch(glob, name, 0) == 0;
    static const char *const bases[] = {"profilerstep", "training_step", "train_step", "step"};
    for (size_t b = 0; b < sizeof(bases) / sizeof(bases[0]); b++) {
        size_t len = strlen(bases[b]);
        if (strncasecmp(name, bases[b], len) != 0)
            continue;
        const char *p = name + len;
        if (!*p)
            return 1;
        if (strchr("#_ -:", *p))
            p++;
        if (!isdigit((unsigned char)*p))
            continue;
        while (isdigit((unsigned char)*p))
            p++;
        if (!*p)
            return 1;
    }
    return 0;
}

/* "step-time>2x" (or "step-time>2"): the factor; -1 when not that. */
static double gt_parse_step_rule(const char *v)
{
    const char *p = "step-time>";
    if (strncmp(v, p, strlen(p)) != 0)
        return -1;
    v += strlen(p);
    char *end;
    errno = 0;
    double k = strtod(v, &end);
    if (errno || end == v || (*end && strcmp(end, "x") != 0) || !(k >= 1.1) || k > 1000)
        return -1;
    return k;
}

/* "idle>50%" (or "idle>50"): the percent, from 1 to 99; -1 when not that. */
static int gt_parse_idle_rule(const char *v)
{
    const char *p = "idle>";
    if (strncmp(v, p, strlen(p)) != 0 || !isdigit((unsigned char)v[strlen(p)]))
        return -1;
    v += strlen(p);
    char *end;
    errno = 0;
    long pct = strtol(v, &end, 10);
    if (errno || (*end && strcmp(end, "%") != 0) || pct < 1 || pct > 99)
        return -1;
    return (int)pct;
}

/* GPUTRACE_TRIGGER: rules separated by commas, each at most once. */
static int gt_parse_trigger(const char *v, double *step_factor, int *idle_pct, uint64_t *hang_ns)
{
    char buf[256];
    if (strlen(v) >= sizeof(buf))
        return -1;
    memcpy(buf, v, strlen(v) + 1);
    double k = 0;
    int pct = 0;
    uint64_t hang = 0, h;
    char *save = NULL;
    int n = 0;
    for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save), n++) {
        while (*t == ' ')
            t++;
        size_t len = strlen(t);
        while (len && t[len - 1] == ' ')
            t[--len] = 0;
        double f = gt_parse_step_rule(t);
        int p = f < 0 ? gt_parse_idle_rule(t) : -1;
        if (f > 0 && !k)
            k = f;
        else if (p > 0 && !pct)
            pct = p;
        else if (f < 0 && p < 0 && !hang && gt_parse_hang_rule(t, &h) == 0)
            hang = h;
        else
            return -1;
    }
    if (!n)
        return -1;
    *step_factor = k;
    *idle_pct = pct;
    *hang_ns = hang;
    return 0;
}

int gt_parse_capture_range(const char *v, struct gt_capture_range *out, char *err, size_t err_len)
{
    out->kind = GT_CAPTURE_NONE;
    out->name[0] = out->domain[0] = 0;
    if (v && strcmp(v, "cudaProfilerApi") == 0) {
        out->kind = GT_CAPTURE_PROFILER;
        return 0;
    }
    if (!v || strncmp(v, "nvtx:", 5) != 0) {
        snprintf(err, err_len, "is not cudaProfilerApi or nvtx:NAME[@DOMAIN]");
        return -1;
    }
    v += 5;
    /* NAME@DOMAIN as nsys's --nvtx-capture writes it: the last '@' splits. */
    const char *at = strrchr(v, '@');
    size_t nlen = at ? (size_t)(at - v) : strlen(v);
    if (nlen == 0 || (at && !at[1])) {
        snprintf(err, err_len, "needs a range name after nvtx:%s (nvtx:NAME or nvtx:NAME@DOMAIN)",
                 nlen ? " and a domain after @" : "");
        return -1;
    }
    if (nlen >= sizeof(out->name) || (at && strlen(at + 1) >= sizeof(out->domain))) {
        snprintf(err, err_len, "names a range or domain over %zu characters", sizeof(out->name) - 1);
        return -1;
    }
    memcpy(out->name, v, nlen);
    out->name[nlen] = 0;
    if (at)
        snprintf(out->domain, sizeof(out->domain), "%s", at + 1);
    out->kind = GT_CAPTURE_NVTX;
    return 0;
}

int gt_parse_capture_end(const char *v, struct gt_capture_range *out, char *err, size_t err_len)
{
    out->end = GT_CAPTURE_END_STOP;
    out->max = 0;
    long n;
    if (v && strcmp(v, "stop") == 0)
        return 0;
    if (v && strcmp(v, "none") == 0) {
        out->end = GT_CAPTURE_END_NONE;
        return 0;
    }
    if (v && strcmp(v, "repeat") == 0) {
        out->end = GT_CAPTURE_END_REPEAT;
        return 0;
    }
    if (v && strncmp(v, "repeat:", 7) == 0 && gt_parse_long(v + 7, 1, 1000000, &n) == 0) {
        out->end = GT_CAPTURE_END_REPEAT;
        out->max = n;
        return 0;
    }
    if (v && (strncmp(v, "stop-shutdown", 13) == 0 || strncmp(v, "repeat-shutdown", 15) == 0))
        snprintf(err, err_len, "would end the program at a range's end, which gputrace never does; "
                               "use stop, repeat[:N] or none");
    else
        snprintf(err, err_len, "is not stop, repeat, repeat:N (N from 1) or none");
    return -1;
}

int gt_config_load(struct gt_config *c, gt_getenv_fn get, char *warnings, size_t warnings_len)
{
    int nwarn = 0;
    if (warnings_len)
        warnings[0] = 0;
    snprintf(c->output, sizeof(c->output), "%s", GT_DEFAULT_OUTPUT);
    c->stack_depth = GT_DEFAULT_STACK_DEPTH;
    c->buffer_events = GT_DEFAULT_BUFFER_EVENTS;
    c->gpu_timing = 1;
    c->python = 1;
    c->nvtx = 1;
    c->standby = 0;
    c->force_overwrite = 0;
    c->record_window_pid = 0;
    c->record_window_at_ns = c->record_window_dur_ns = 0;
    c->trigger_step_factor = 0;
    c->trigger_idle_pct = 0;
    c->trigger_hang_ns = 0;
    c->trigger_cooldown_ns = GT_DEFAULT_TRIGGER_COOLDOWN_NS;
    c->trigger_duration_ns = GT_DEFAULT_TRIGGER_DURATION_NS;
    c->step_range[0] = 0;
    c->sample_hz = GT_DEFAULT_SAMPLE_HZ;
    c->sample_all = 1; /* every thread: a launching thread often only waits on one that never calls CUDA */
    c->sample_native = GT_NATIVE_BLOCKED;
    c->sample_budget_bp = GT_DEFAULT_SAMPLE_BUDGET_BP;
    memset(&c->capture, 0, sizeof(c->capture));

    const char *v = get("GPUTRACE_OUTPUT");
    if (v) {
        if (!*v || strlen(v) >= sizeof(c->output))
            gt_add_warning(warnings, warnings_len, &nwarn, "%s='%s' is empty or too long; using %s",
                           "GPUTRACE_OUTPUT", *v ? "..." : "", GT_DEFAULT_OUTPUT);
        else
            snprintf(c->output, sizeof(c->output), "%s", v);
    }
    long n;
    v = get("GPUTRACE_STACK_DEPTH");
    if (v) {
        if (gt_parse_long(v, 0, GT_STACK_MAX_DEPTH, &n) == 0)
            c->stack_depth = (int)n;
        else
            gt_add_warning(warnings, warnings_len, &nwarn,
                           "%s='%s' is not a whole number from 0 to 128; using %s", "GPUTRACE_STACK_DEPTH", v,
                           "32");
    }
    v = get("GPUTRACE_BUFFER_EVENTS");
    if (v) {
        if (gt_parse_long(v, 64, 1L << 20, &n) == 0 && (n & (n - 1)) == 0)
            c->buffer_events = (uint32_t)n;
        else
            gt_add_warning(warnings, warnings_len, &nwarn,
                           "%s='%s' is not a power of two from 64 to 1048576; using %s",
                           "GPUTRACE_BUFFER_EVENTS", v, "65536");
    }
    v = get("GPUTRACE_GPU_TIMING");
    if (v) {
        if (strcmp(v, "cupti") == 0)
            c->gpu_timing = 1;
        else if (strcmp(v, "off") == 0)
            c->gpu_timing = 0;
        else
            gt_add_warning(warnings, warnings_len, &nwarn, "%s='%s' is not 'cupti' or 'off'; using %s",
                           "GPUTRACE_GPU_TIMING", v, "cupti");
    }
    v = get("GPUTRACE_PYTHON");
    if (v) {
        if (strcmp(v, "1") == 0)
            c->python = 1;
        else if (strcmp(v, "0") == 0)
            c->python = 0;
        else
            gt_add_warning(warnings, warnings_len, &nwarn, "%s='%s' is not 1 or 0; using %s", "GPUTRACE_PYTHON",
                           v, "1");
    }
    v = get("GPUTRACE_NVTX");
    if (v) {
        if (strcmp(v, "1") == 0)
            c->nvtx = 1;
        else if (strcmp(v, "0") == 0)
            c->nvtx = 0;
        else
            gt_add_warning(warnings, warnings_len, &nwarn, "%s='%s' is not 1 or 0; using %s", "GPUTRACE_NVTX", v,
                           "1");
    }
    v = get("GPUTRACE_FORCE_OVERWRITE");
    if (v) {
        if (strcmp(v, "1") == 0 || strcmp(v, "0") == 0)
            c->force_overwrite = v[0] == '1';
        else
            gt_add_warning(warnings, warnings_len, &nwarn, "%s='%s' is not 1 or 0; using %s",
                           "GPUTRACE_FORCE_OVERWRITE", v, "0 (an existing trace is kept)");
    }
    v = get("GPUTRACE_RECORD_WINDOW");
    if (v && *v) {
        long pid;
        unsigned long long at, dur;
        int used = 0;
        if (sscanf(v, "%ld:%llu:%llu%n", &pid, &at, &dur, &used) == 3 && !v[used] && pid > 0) {
            c->record_window_pid = pid;
            c->record_window_at_ns = at;
            c->record_window_dur_ns = dur;
        } else
            gt_add_warning(warnings, warnings_len, &nwarn, "%s='%s' is not PID:AT_NS:DURATION_NS; %s",
                           "GPUTRACE_RECORD_WINDOW", v, "no window");
    }
    v = get("GPUTRACE_MODE");
    if (v) {
        if (strcmp(v, "record") == 0)
            c->standby = 0;
        else if (strcmp(v, "standby") == 0)
            c->standby = 1;
        else
            gt_add_warning(warnings, warnings_len, &nwarn, "%s='%s' is not 'record' or 'standby'; using %s",
                           "GPUTRACE_MODE", v, "record");
    }
    char why[256];
    v = get("GPUTRACE_CAPTURE_RANGE");
    if (v && *v) {
        if (gt_parse_capture_range(v, &c->capture, why, sizeof(why)) < 0) {
            char line[384];
            snprintf(line, sizeof(line), "%%s='%%s' %s; %%s", why);
            gt_add_warning(warnings, warnings_len, &nwarn, line, "GPUTRACE_CAPTURE_RANGE", v,
                           "recording as GPUTRACE_MODE says");
        } else {
            c->standby = 1; /* nothing is recorded until the program opens a range */
        }
    }
    v = get("GPUTRACE_CAPTURE_RANGE_END");
    if (v && *v) {
        struct gt_capture_range e;
        if (gt_parse_capture_end(v, &e, why, sizeof(why)) < 0) {
            char line[384];
            snprintf(line, sizeof(line), "%%s='%%s' %s; %%s", why);
            gt_add_warning(warnings, warnings_len, &nwarn, line, "GPUTRACE_CAPTURE_RANGE_END", v, "using stop");
        } else {
            c->capture.end = e.end;
            c->capture.max = e.max;
        }
    }
    v = get("GPUTRACE_TRIGGER");
    if (v && *v) {
        double k = 0;
        int pct = 0;
        uint64_t hang = 0;
        if (gt_parse_trigger(v, &k, &pct, &hang) < 0)
            gt_add_warning(warnings, warnings_len, &nwarn,
                           "%s='%s' is not step-time>Kx (K from 1.1 to 1000) or idle>P%% (P from 1 to 99) or "
                           "hang>D (D a duration such as 60s), or some of them separated by commas; %s",
                           "GPUTRACE_TRIGGER", v, "no automatic windows");
        else if (!c->standby)
            gt_add_warning(warnings, warnings_len, &nwarn, "%s='%s' applies in standby (GPUTRACE_MODE=standby); %s",
                           "GPUTRACE_TRIGGER", v, "ignored while recording everything");
        else {
            c->trigger_step_factor = k;
            c->trigger_idle_pct = pct;
            c->trigger_hang_ns = hang;
        }
    }
    v = get("GPUTRACE_TRIGGER_COOLDOWN");
    if (v && gt_parse_duration_ns(v, &c->trigger_cooldown_ns) < 0) {
        c->trigger_cooldown_ns = GT_DEFAULT_TRIGGER_COOLDOWN_NS;
        gt_add_warning(warnings, warnings_len, &nwarn, "%s='%s' is not a duration such as 10m or 30s; using %s",
                       "GPUTRACE_TRIGGER_COOLDOWN", v, "10m");
    }
    v = get("GPUTRACE_TRIGGER_DURATION");
    if (v && gt_parse_duration_ns(v, &c->trigger_duration_ns) < 0) {
        c->trigger_duration_ns = GT_DEFAULT_TRIGGER_DURATION_NS;
        gt_add_warning(warnings, warnings_len, &nwarn, "%s='%s' is not a duration such as 10s or 500ms; using %s",
                       "GPUTRACE_TRIGGER_DURATION", v, "10s");
    }
    v = get("GPUTRACE_STEP_RANGE");
    if (v) {
        if (strlen(v) >= sizeof(c->step_range))
            gt_add_warning(warnings, warnings_len, &nwarn, "%s='%s' is too long; using %s", "GPUTRACE_STEP_RANGE",
                           "...", "the built-in rule");
        else
            snprintf(c->step_range, sizeof(c->step_range), "%s", v);
    }
    v = get("GPUTRACE_SAMPLE_HZ");
    if (v) {
        if (gt_parse_long(v, 0, GT_MAX_SAMPLE_HZ, &n) == 0)
            c->sample_hz = (int)n;
        else
            gt_add_warning(warnings, warnings_len, &nwarn,
                           "%s='%s' is not a whole number from 0 to 1000; using %s", "GPUTRACE_SAMPLE_HZ", v, "100");
    }
    v = get("GPUTRACE_SAMPLE_THREADS");
    if (v) {
        if (strcmp(v, "cuda") == 0)
            c->sample_all = 0;
        else if (strcmp(v, "all") == 0)
            c->sample_all = 1;
        else
            gt_add_warning(warnings, warnings_len, &nwarn, "%s='%s' is not 'cuda' or 'all'; using %s",
                           "GPUTRACE_SAMPLE_THREADS", v, "all");
    }
    v = get("GPUTRACE_SAMPLE_NATIVE");
    if (v) {
        if (strcmp(v, "blocked") == 0)
            c->sample_native = GT_NATIVE_BLOCKED;
        else if (strcmp(v, "perf") == 0)
            c->sample_native = GT_NATIVE_PERF;
        else if (strcmp(v, "auto") == 0)
            c->sample_native = GT_NATIVE_AUTO;
        else
            gt_add_warning(warnings, warnings_len, &nwarn, "%s='%s' is not 'blocked', 'perf' or 'auto'; using %s",
                           "GPUTRACE_SAMPLE_NATIVE", v, "blocked");
    }
    /* The default budget is 1% of a core at the default 100 Hz, and
     * grows with the rate asked for (10% at 1000 Hz): a rate asked for is
     * kept unless the threads are many. */
    if (c->sample_hz > GT_DEFAULT_SAMPLE_HZ)
        c->sample_budget_bp = GT_DEFAULT_SAMPLE_BUDGET_BP * c->sample_hz / GT_DEFAULT_SAMPLE_HZ;
    v = get("GPUTRACE_SAMPLE_BUDGET");
    if (v) {
        long bp;
        if (gt_parse_percent_bp(v, &bp) == 0)
            c->sample_budget_bp = (int)bp;
        else
            gt_add_warning(warnings, warnings_len, &nwarn,
                           "%s='%s' is not a percentage of one core from 0 to 100 (as 1%% or 0.5); using %s",
                           "GPUTRACE_SAMPLE_BUDGET", v, "the default");
    }
    struct gt_warn_to w = {warnings, warnings_len, &nwarn};
    gt_config_flight_load(c, get, gt_warn_into, &w);
    return nwarn;
}

static int gt_append(char *out, size_t len, size_t *pos, const char *s)
{
    size_t n = strlen(s);
    if (*pos + n >= len)
        return -1;
    memcpy(out + *pos, s, n);
    *pos += n;
    out[*pos] = 0;
    return 0;
}

/* A value from the environment names one file, never a directory walk. */
static const char *gt_path_safe(const char *s, const char *fallback, char *buf, size_t len)
{
    if (!s || !*s)
        s = fallback;
    size_t i = 0;
    for (; s[i] && i + 1 < len; i++)
        buf[i] = s[i] == '/' ? '_' : s[i];
    buf[i] = 0;
    if (strcmp(buf, "..") == 0 || strcmp(buf, ".") == 0)
        buf[0] = '_';
    return buf;
}

int gt_expand_output(const char *pattern, const struct gt_path_vars *v, char *out, size_t out_len, char *err,
                     size_t err_len)
{
    size_t pos = 0;
    if (out_len == 0)
        return -1;
    out[0] = 0;
    if (!pattern || !*pattern) {
        snprintf(err, err_len, "output path is empty");
        return -1;
    }
    for (const char *p = pattern; *p; p++) {
        char lit[2] = {*p, 0};
        char num[256];
        const char *piece = lit;
        if (*p == '%') {
            switch (p[1]) {
            case 'p': snprintf(num, sizeof(num), "%ld", v->pid); piece = num; break;
            case 'n': piece = gt_path_safe(v->program, "unknown", num, sizeof(num)); break;
            case 'h': piece = gt_path_safe(v->host, "localhost", num, sizeof(num)); break;
            case 'r': piece = gt_path_safe(v->rank, "0", num, sizeof(num)); break;
            case 'w': snprintf(num, sizeof(num), "%ld", v->window > 0 ? v->window : 1); piece = num; break;
            case '%': piece = "%"; break;
            default:
                snprintf(err, err_len, "unknown sequence '%%%c' in output path (use %%p %%n %%h %%r %%w or %%%%)",
                         p[1] ? p[1] : ' ');
                return -1;
            }
            p++;
        }
        if (gt_append(out, out_len, &pos, piece) < 0) {
            snprintf(err, err_len, "output path is too long");
            return -1;
        }
    }
    return 0;
}

int gt_output_per_window(const char *pattern, char *out, size_t out_len)
{
    for (const char *p = pattern; *p; p++) {
        if (p[0] == '%' && p[1] == '%') {
            p++;
            continue;
        }
        if (p[0] == '%' && p[1] == 'w')
            return snprintf(out, out_len, "%s", pattern) < (int)out_len ? 0 : -1;
    }
    const char *slash = strrchr(pattern, '/');
    const char *dot = strrchr(slash ? slash + 1 : pattern, '.');
    if (!dot || dot == (slash ? slash + 1 : pattern))
        dot = pattern + strlen(pattern);
    int n = snprintf(out, out_len, "%.*s-w%%w%s", (int)(dot - pattern), pattern, dot);
    return n >= 0 && n < (int)out_len ? 0 : -1;
}

static const char *const gt_rank_vars[] = {"RANK", "OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK",
                                            "SLURM_PROCID", "MV2_COMM_WORLD_RANK", "LOCAL_RANK"};

const char *gt_rank_var_from_env(gt_getenv_fn get)
{
    for (size_t i = 0; i < sizeof(gt_rank_vars) / sizeof(gt_rank_vars[0]); i++) {
        const char *v = get(gt_rank_vars[i]);
        if (v && *v)
            return gt_rank_vars[i];
    }
    return NULL;
}

const char *gt_rank_from_env(gt_getenv_fn get)
{
    const char *var = gt_rank_var_from_env(get);
    return var ? get(var) : "0";
}
