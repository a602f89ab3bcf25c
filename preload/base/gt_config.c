/* gt_config.c: settings parsing and output path expansion. */
#include <errno.h>
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
    c->standby = 0;
    c->sample_hz = GT_DEFAULT_SAMPLE_HZ;
    c->sample_all = 0;

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
                           "GPUTRACE_SAMPLE_THREADS", v, "cuda");
    }
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

const char *gt_rank_from_env(gt_getenv_fn get)
{
    static const char *const vars[] = {"RANK", "OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK", "SLURM_PROCID",
                                       "MV2_COMM_WORLD_RANK", "LOCAL_RANK"};
    for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++) {
        const char *v = get(vars[i]);
        if (v && *v)
            return v;
    }
    return "0";
}
