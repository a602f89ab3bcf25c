/* gt_budget.c: budget names, values and budget files for `gputrace audit`. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "analysis/gt_budget.h"
#include "base/gt_fmt.h"

const char *const gt_budget_names[GT_NBUDGETS] = {
    "max-idle-pct",
    "max-pageable-h2d-bytes",
    "max-launch-bound-pct",
    "max-sync-pct",
    "max-step-p99",
    "max-straggler-wait-pct",
    "max-rank-skew-pct",
};

/* The job budgets' ceiling: far beyond any real figure, a typo's guard. */
#define GT_BUDGET_RANK_PCT_MAX 1e6

#define GT_BUDGET_FILE_MAX (1 << 20)

int gt_budget_key(const char *name)
{
    for (int k = 0; k < GT_NBUDGETS; k++)
        if (strcmp(name, gt_budget_names[k]) == 0)
            return k;
    return -1;
}

int gt_budget_is_pct(int key)
{
    return key != GT_BUDGET_PAGEABLE_H2D_BYTES && key != GT_BUDGET_STEP_P99;
}

int gt_budget_is_duration(int key)
{
    return key == GT_BUDGET_STEP_P99;
}

int gt_budget_is_rank(int key)
{
    return key == GT_BUDGET_STRAGGLER_WAIT_PCT || key == GT_BUDGET_RANK_SKEW_PCT;
}

/* Length of a plain decimal number at s: digits, optionally one '.' and
 * more digits, at least one digit in all. 0 if there is none. strtod alone
 * would also take "inf", "nan", hex and leading blanks. */
static size_t gt_decimal_len(const char *s, int allow_fraction)
{
    size_t n = 0, digits = 0;
    while (isdigit((unsigned char)s[n]))
        n++, digits++;
    if (allow_fraction && s[n] == '.') {
        n++;
        while (isdigit((unsigned char)s[n]))
            n++, digits++;
    }
    return digits ? n : 0;
}

static const char *gt_skip_blanks(const char *s)
{
    while (*s == ' ' || *s == '\t')
        s++;
    return s;
}

int gt_parse_pct(const char *s, double *out)
{
    return gt_parse_pct_upto(s, 100, out);
}

int gt_parse_pct_upto(const char *s, double max, double *out)
{
    size_t n = gt_decimal_len(s, 1);
    if (!n || n > 32)
        return -1;
    char num[40];
    memcpy(num, s, n);
    num[n] = 0;
    const char *rest = gt_skip_blanks(s + n);
    if (*rest == '%')
        rest++;
    if (*rest)
        return -1;
    double v = strtod(num, NULL);
    if (v < 0 || v > max)
        return -1;
    *out = v;
    return 0;
}

int gt_parse_bytes(const char *s, uint64_t *out)
{
    static const struct {
        const char *suffix;
        int shift;
    } units[] = {
        {"", 0},   {"B", 0},   {"K", 10}, {"KiB", 10}, {"M", 20},
        {"MiB", 20}, {"G", 30}, {"GiB", 30}, {"T", 40}, {"TiB", 40},
    };
    size_t n = gt_decimal_len(s, 0);
    if (!n)
        return -1;
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned d = (unsigned)(s[i] - '0');
        if (v > (UINT64_MAX - d) / 10)
            return -1;
        v = v * 10 + d;
    }
    const char *suffix = gt_skip_blanks(s + n);
    if (!*suffix && suffix != s + n)
        return -1; /* trailing blanks with no suffix */
    for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
        if (strcasecmp(suffix, units[i].suffix) != 0)
            continue;
        if (units[i].shift && v > (UINT64_MAX >> units[i].shift))
            return -1;
        *out = v << units[i].shift;
        return 0;
    }
    return -1;
}

static void gt_known_keys(char *buf, size_t len)
{
    size_t off = 0;
    buf[0] = 0;
    for (int k = 0; k < GT_NBUDGETS && off < len; k++)
        off += (size_t)snprintf(buf + off, len - off, "%s%s", k ? ", " : "", gt_budget_names[k]);
}

int gt_budget_set(struct gt_budgets *b, const char *name, const char *value, char *err, size_t errlen)
{
    int k = gt_budget_key(name);
    if (k < 0) {
        char known[256];
        gt_known_keys(known, sizeof(known));
        snprintf(err, errlen, "unknown budget '%.60s' (known: %s)", name, known);
        return -1;
    }
    if (gt_budget_is_rank(k)) {
        double v;
        if (gt_parse_pct_upto(value, GT_BUDGET_RANK_PCT_MAX, &v) < 0) {
            snprintf(err, errlen, "%s: '%.60s' is not a percent (a number of 0 or more, e.g. 10 or 150)", name,
                     value);
            return -1;
        }
        b->pct[k] = v;
    } else if (gt_budget_is_pct(k)) {
        double v;
        if (gt_parse_pct(value, &v) < 0) {
            snprintf(err, errlen, "%s: '%.60s' is not a percent (a number from 0 to 100, e.g. 20 or 12.5)",
                     name, value);
            return -1;
        }
        b->pct[k] = v;
    } else if (gt_budget_is_duration(k)) {
        uint64_t v;
        if (gt_parse_duration(value, &v) < 0) {
            snprintf(err, errlen, "%s: '%.60s' is not a duration (e.g. 250us, 20ms or 1.5s)", name, value);
            return -1;
        }
        b->ns = v;
    } else {
        uint64_t v;
        if (gt_parse_bytes(value, &v) < 0) {
            snprintf(err, errlen,
                     "%s: '%.60s' is not a byte count (a whole number, optionally with K, M, G, "
                     "KiB, MiB or GiB, e.g. 64MiB)",
                     name, value);
            return -1;
        }
        b->bytes = v;
    }
    b->set[k] = 1;
    b->line[k] = 0;
    return 0;
}

static char *gt_trim(char *s)
{
    while (isspace((unsigned char)*s))
        s++;
    char *e = s + strlen(s);
    while (e > s && isspace((unsigned char)e[-1]))
        *--e = 0;
    return s;
}

int gt_budget_parse_text(struct gt_budgets *b, const char *text, char *err, size_t errlen)
{
    struct gt_budgets seen;
    memset(&seen, 0, sizeof(seen));
    int lineno = 0;
    for (const char *p = text; *p;) {
        lineno++;
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        char line[512];
        if (len >= sizeof(line)) {
            snprintf(err, errlen, "line %d: line too long", lineno);
            return -1;
        }
        memcpy(line, p, len);
        line[len] = 0;
        p += len + (nl ? 1 : 0);
        char *hash = strchr(line, '#');
        if (hash)
            *hash = 0;
        char *s = gt_trim(line);
        if (!*s)
            continue;
        char *eq = strchr(s, '=');
        if (!eq) {
            snprintf(err, errlen, "line %d: expected 'KEY = VALUE', got '%.60s'", lineno, s);
            return -1;
        }
        *eq = 0;
        char *key = gt_trim(s), *value = gt_trim(eq + 1);
        if (!*key) {
            snprintf(err, errlen, "line %d: no key before '='", lineno);
            return -1;
        }
        if (!*value) {
            snprintf(err, errlen, "line %d: %.60s: no value after '='", lineno, key);
            return -1;
        }
        int k = gt_budget_key(key);
        if (k >= 0 && seen.set[k]) {
            snprintf(err, errlen, "line %d: %s is already set on line %d", lineno, key, seen.line[k]);
            return -1;
        }
        char msg[256];
        if (gt_budget_set(b, key, value, msg, sizeof(msg)) < 0) {
            snprintf(err, errlen, "line %d: %s", lineno, msg);
            return -1;
        }
        seen.set[k] = 1;
        seen.line[k] = b->line[k] = lineno;
    }
    return 0;
}

int gt_budget_load(struct gt_budgets *b, const char *path, char *err, size_t errlen)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return -1;
    }
    char *text = malloc(GT_BUDGET_FILE_MAX + 1);
    if (!text) {
        fclose(f);
        snprintf(err, errlen, "%s: out of memory", path);
        return -1;
    }
    size_t n = fread(text, 1, GT_BUDGET_FILE_MAX + 1, f);
    int bad = ferror(f);
    int saved = errno;
    fclose(f);
    if (bad) {
        snprintf(err, errlen, "%s: %s", path, strerror(saved));
        free(text);
        return -1;
    }
    if (n > GT_BUDGET_FILE_MAX) {
        snprintf(err, errlen, "%s: too big for a budget file (over 1 MiB)", path);
        free(text);
        return -1;
    }
    text[n] = 0;
    if (strlen(text) != n) {
        snprintf(err, errlen, "%s: not a text file (NUL byte)", path);
        free(text);
        return -1;
    }
    char msg[400];
    int rc = gt_budget_parse_text(b, text, msg, sizeof(msg));
    free(text);
    if (rc < 0) {
        /* "line N: reason" -> "PATH:N: reason" */
        int lineno, used = 0;
        if (sscanf(msg, "line %d: %n", &lineno, &used) == 1 && used > 0)
            snprintf(err, errlen, "%s:%d: %s", path, lineno, msg + used);
        else
            snprintf(err, errlen, "%s: %s", path, msg);
        return -1;
    }
    return 0;
}

void gt_budget_merge(struct gt_budgets *b, const struct gt_budgets *over)
{
    for (int k = 0; k < GT_NBUDGETS; k++) {
        if (!over->set[k])
            continue;
        b->set[k] = 1;
        b->line[k] = over->line[k];
        if (gt_budget_is_pct(k))
            b->pct[k] = over->pct[k];
        else if (gt_budget_is_duration(k))
            b->ns = over->ns;
        else
            b->bytes = over->bytes;
    }
}

int gt_budget_count(const struct gt_budgets *b)
{
    int n = 0;
    for (int k = 0; k < GT_NBUDGETS; k++)
        n += b->set[k] != 0;
    return n;
}

int gt_budget_count_per_trace(const struct gt_budgets *b)
{
    int n = 0;
    for (int k = 0; k < GT_NBUDGETS; k++)
        n += b->set[k] != 0 && !gt_budget_is_rank(k);
    return n;
}
