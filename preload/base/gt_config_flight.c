/* gt_config_flight.c: the flight recorder's and the size bound's settings
 * (GPUTRACE_FLIGHT, GPUTRACE_MAX_SIZE, the hang rule of GPUTRACE_TRIGGER):
 * pure functions of their inputs, shared with `gputrace record`. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/gt_config.h"

int gt_parse_size_bytes(const char *s, uint64_t *out)
{
    if (!s || !*s || *s == '-')
        return -1;
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || !(v > 0))
        return -1;
    /* Binary, as docs/cli.md says for every size: 1K = 1024. A unit is
     * required, so a bare number is never taken for a duration or a count. */
    static const struct {
        const char *unit;
        int shift;
    } units[] = {{"B", 0}, {"K", 10}, {"KiB", 10}, {"KB", 10}, {"M", 20}, {"MiB", 20}, {"MB", 20},
                 {"G", 30}, {"GiB", 30}, {"GB", 30}, {"T", 40}, {"TiB", 40}, {"TB", 40}};
    for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
        if (strcmp(end, units[i].unit) == 0) {
            double b = v * (double)(1ull << units[i].shift);
            if (b < 1 || b > 1e18)
                return -1;
            *out = (uint64_t)b;
            return 0;
        }
    return -1;
}

/* A duration with its unit ("30s", "2m"): a bare number is refused. */
static int gt_parse_duration_unit(const char *s, uint64_t *out)
{
    size_t n = strlen(s);
    if (!n || (s[n - 1] >= '0' && s[n - 1] <= '9') || s[n - 1] == '.')
        return -1;
    return gt_parse_duration_ns(s, out);
}

int gt_parse_flight(const char *v, uint64_t *ns, uint64_t *bytes)
{
    char buf[128];
    if (!v || strlen(v) >= sizeof(buf))
        return -1;
    memcpy(buf, v, strlen(v) + 1);
    *ns = *bytes = 0;
    char *save = NULL;
    int n = 0;
    for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save), n++) {
        while (*t == ' ')
            t++;
        uint64_t x;
        if (!*bytes && gt_parse_size_bytes(t, &x) == 0) {
            if (x < GT_FLIGHT_MIN_BYTES)
                return -1;
            *bytes = x;
        } else if (!*ns && gt_parse_duration_unit(t, &x) == 0) {
            *ns = x;
        } else {
            return -1;
        }
    }
    return n ? 0 : -1;
}

int gt_parse_max_size(const char *v, uint64_t *bytes, int *keep_last)
{
    char buf[64];
    if (!v || strlen(v) >= sizeof(buf))
        return -1;
    memcpy(buf, v, strlen(v) + 1);
    *keep_last = 0;
    char *colon = strchr(buf, ':');
    if (colon) {
        *colon = 0;
        if (strcmp(colon + 1, "last") == 0)
            *keep_last = 1;
        else if (strcmp(colon + 1, "stop") != 0)
            return -1;
    }
    if (gt_parse_size_bytes(buf, bytes) < 0 || *bytes < GT_MAX_SIZE_MIN_BYTES)
        return -1;
    return 0;
}

int gt_parse_hang_rule(const char *v, uint64_t *ns)
{
    if (strncmp(v, "hang>", 5) != 0)
        return -1;
    return gt_parse_duration_unit(v + 5, ns);
}

void gt_config_flight_load(struct gt_config *c, gt_getenv_fn get, gt_warn_fn warn, void *arg)
{
    c->flight_ns = c->flight_bytes = 0;
    c->max_size_bytes = 0;
    c->max_size_keep_last = 0;
    const char *v = get("GPUTRACE_FLIGHT");
    if (v && *v) {
        if (gt_parse_flight(v, &c->flight_ns, &c->flight_bytes) < 0) {
            c->flight_ns = c->flight_bytes = 0;
            warn(arg, "GPUTRACE_FLIGHT", v, "is not a duration (30s) or a size of 1MiB or more (256MiB), or both "
                 "separated by a comma; no flight recorder");
        } else if (!c->standby) {
            c->flight_ns = c->flight_bytes = 0;
            warn(arg, "GPUTRACE_FLIGHT", v, "applies in standby (GPUTRACE_MODE=standby); no flight recorder");
        } else if (!c->flight_bytes) {
            c->flight_bytes = GT_DEFAULT_FLIGHT_BYTES;
        }
    }
    v = get("GPUTRACE_MAX_SIZE");
    if (v && *v && gt_parse_max_size(v, &c->max_size_bytes, &c->max_size_keep_last) < 0) {
        c->max_size_bytes = 0;
        c->max_size_keep_last = 0;
        warn(arg, "GPUTRACE_MAX_SIZE", v, "is not a size of 1MiB or more (512MiB), optionally followed by :stop or "
             ":last; no bound");
    }
}
