/* gt_diff_out.c: the comparison as text (what changed beyond the noise,
 * what is new, what vanished) or as one JSON document with every row. */
#include <stdio.h>

#include "base/gt_fmt.h"
#include "output/gt_diff_out.h"

/* A rate: "12.3 ms/s" or "1.5 MiB/s". */
static const char *gt_rate(const struct gt_diff_row *r, double v, char *buf, size_t len)
{
    char b[32];
    if (r->bytes)
        snprintf(buf, len, "%s/s", gt_fmt_bytes((int64_t)(v + 0.5), b, sizeof(b)));
    else
        snprintf(buf, len, "%s/s", gt_fmt_duration((int64_t)(v + 0.5), b, sizeof(b)));
    return buf;
}

static void gt_line(FILE *out, const struct gt_diff_row *r)
{
    char a[48], b[48];
    fprintf(out, "  %-9s ", gt_diff_cat_names[r->cat]);
    gt_put_text(out, r->name, 0);
    fprintf(out, ": %s -> %s", gt_rate(r, r->mean[0], a, sizeof(a)), gt_rate(r, r->mean[1], b, sizeof(b)));
    if (r->status == GT_DS_CHANGED && r->mean[0] > 0)
        fprintf(out, " (%+.1f%%)", r->change_pct);
    if (r->cat != GT_DC_SUMMARY)
        fprintf(out, ", %llu -> %llu calls", (unsigned long long)r->count[0], (unsigned long long)r->count[1]);
    fputc('\n', out);
}

void gt_diff_text(FILE *out, const struct gt_diff *d, int all)
{
    char a[32], b[32];
    fprintf(out, "base: %d trace%s, mean span %s; new: %d trace%s, mean span %s; figures per second of span\n",
            d->ntraces[0], d->ntraces[0] == 1 ? "" : "s", gt_fmt_duration((int64_t)d->span_ns[0], a, sizeof(a)),
            d->ntraces[1], d->ntraces[1] == 1 ? "" : "s", gt_fmt_duration((int64_t)d->span_ns[1], b, sizeof(b)));
    static const char *const heads[4] = {"unchanged (within noise):", "changed beyond noise:", "new sites:",
                                         "vanished sites:"};
    static const int order[4] = {GT_DS_CHANGED, GT_DS_NEW, GT_DS_VANISHED, GT_DS_SAME};
    int any = 0;
    for (int k = 0; k < 4; k++) {
        int st = order[k], n = 0;
        if (st == GT_DS_SAME && !all)
            continue;
        for (size_t i = 0; i < d->nrows; i++) {
            const struct gt_diff_row *r = &d->rows[i];
            if (r->status != st || (st == GT_DS_SAME && r->mean[0] == 0 && r->mean[1] == 0))
                continue;
            if (!n++)
                fprintf(out, "%s\n", heads[st]);
            gt_line(out, r);
            any += st != GT_DS_SAME;
        }
    }
    if (!any)
        fprintf(out, "no change beyond noise, no new or vanished site\n");
}

void gt_diff_json(FILE *out, const struct gt_diff *d)
{
    fprintf(out, "{\"base\":{\"traces\":%d,\"span_ns\":%.0f},\"new\":{\"traces\":%d,\"span_ns\":%.0f},\"rows\":[",
            d->ntraces[0], d->span_ns[0], d->ntraces[1], d->span_ns[1]);
    for (size_t i = 0; i < d->nrows; i++) {
        const struct gt_diff_row *r = &d->rows[i];
        fprintf(out, "%s{\"kind\":\"%s\",\"name\":", i ? "," : "", gt_diff_cat_names[r->cat]);
        gt_put_json_string(out, r->name);
        fprintf(out,
                ",\"unit\":\"%s\",\"base\":%.3f,\"new\":%.3f,\"base_spread\":%.3f,\"new_spread\":%.3f,"
                "\"base_count\":%llu,\"new_count\":%llu,\"base_raw\":%.3f,\"new_raw\":%.3f,\"change_pct\":%.3f,"
                "\"status\":\"%s\"}",
                r->bytes ? "bytes_per_s" : "ns_per_s", r->mean[0], r->mean[1], r->spread[0], r->spread[1],
                (unsigned long long)r->count[0], (unsigned long long)r->count[1], r->raw[0], r->raw[1],
                r->change_pct, gt_diff_status_names[r->status]);
    }
    fputs("]}\n", out);
}
