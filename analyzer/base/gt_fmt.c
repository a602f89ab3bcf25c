/* gt_fmt.c: human-readable units and safe text output. */
#include <stdlib.h>
#include <string.h>

#include "base/gt_fmt.h"

const char *gt_fmt_bytes(int64_t bytes, char *buf, size_t len)
{
    if (bytes < 0) {
        snprintf(buf, len, "%lld B", (long long)bytes);
        return buf;
    }
    return gt_fmt_ubytes((uint64_t)bytes, buf, len);
}

const char *gt_fmt_ubytes(uint64_t bytes, char *buf, size_t len)
{
    static const char *const units[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    if (bytes < 1024) {
        snprintf(buf, len, "%llu B", (unsigned long long)bytes);
        return buf;
    }
    double v = (double)bytes / 1024;
    size_t u = 0;
    while (v >= 1024 && u + 1 < sizeof(units) / sizeof(units[0])) {
        v /= 1024;
        u++;
    }
    snprintf(buf, len, "%.1f %s", v, units[u]);
    return buf;
}

const char *gt_fmt_duration(int64_t ns, char *buf, size_t len)
{
    if (ns < 0)
        ns = 0;
    if (ns < 1000)
        snprintf(buf, len, "%lld ns", (long long)ns);
    else if (ns < 1000000)
        snprintf(buf, len, "%.1f us", ns / 1e3);
    else if (ns < 1000000000)
        snprintf(buf, len, "%.2f ms", ns / 1e6);
    else if (ns < 60000000000LL)
        snprintf(buf, len, "%.3f s", ns / 1e9);
    else if (ns < 3600000000000LL)
        snprintf(buf, len, "%lld min %.1f s", (long long)(ns / 60000000000LL),
                 (ns % 60000000000LL) / 1e9);
    else
        snprintf(buf, len, "%lld h %02lld min", (long long)(ns / 3600000000000LL),
                 (long long)(ns % 3600000000000LL / 60000000000LL));
    return buf;
}

const char *gt_kernel_label(const char *name)
{
    return name && *name ? name : "(unnamed kernel)";
}

void gt_put_text(FILE *out, const char *s, int width)
{
    if (!s)
        s = "";
    /* Count columns first so we know whether to cut and where. */
    int cols = 0;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        if ((*p & 0xc0) != 0x80)
            cols++;
    int limit = (width > 0 && cols > width) ? width - 3 : -1;
    int col = 0;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if ((*p & 0xc0) != 0x80) {
            if (limit >= 0 && col == limit)
                break;
            col++;
        }
        fputc(*p < 0x20 || *p == 0x7f ? '?' : *p, out);
    }
    if (limit >= 0)
        fputs("...", out);
}

void gt_put_html(FILE *out, const char *s)
{
    for (; s && *s; s++) {
        switch (*s) {
        case '<': fputs("&lt;", out); break;
        case '>': fputs("&gt;", out); break;
        case '&': fputs("&amp;", out); break;
        case '"': fputs("&quot;", out); break;
        default: fputc(*s, out);
        }
    }
}

void gt_put_json_string(FILE *out, const char *s)
{
    if (!s) {
        fputs("null", out);
        return;
    }
    fputc('"', out);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        switch (*p) {
        case '"': fputs("\\\"", out); break;
        case '\\': fputs("\\\\", out); break;
        case '\n': fputs("\\n", out); break;
        case '\t': fputs("\\t", out); break;
        case '\r': fputs("\\r", out); break;
        default:
            if (*p < 0x20 || *p == 0x7f)
                fprintf(out, "\\u%04x", *p);
            else
                fputc(*p, out);
        }
    }
    fputc('"', out);
}

int gt_parse_window_length(const char *s, uint64_t *ns)
{
    static const struct {
        const char *unit;
        double scale;
    } units[] = {{"ns", 1}, {"us", 1e3}, {"ms", 1e6}, {"s", 1e9}, {"m", 60e9}, {"h", 3600e9}};
    if (!s || !*s || *s == '-')
        return -1;
    char *end;
    double v = strtod(s, &end);
    if (end == s || !(v >= 0))
        return -1;
    for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
        if (strcmp(end, units[i].unit) == 0) {
            double r = v * units[i].scale;
            if (r > 9e18)
                return -1;
            *ns = (uint64_t)(r + 0.5);
            return 0;
        }
    return -1; /* no unit, or not one of these */
}

int gt_parse_duration(const char *s, uint64_t *ns)
{
    if (!s || !*s || *s == '-')
        return -1;
    char *end;
    double v = strtod(s, &end);
    if (end == s || !(v >= 0) || v > 1e18)
        return -1;
    double scale = 1;
    if (!*end || strcmp(end, "ns") == 0)
        scale = 1;
    else if (strcmp(end, "us") == 0)
        scale = 1e3;
    else if (strcmp(end, "ms") == 0)
        scale = 1e6;
    else if (strcmp(end, "s") == 0)
        scale = 1e9;
    else
        return -1;
    double r = v * scale;
    if (r > 9e18)
        return -1;
    *ns = (uint64_t)(r + 0.5);
    return 0;
}
