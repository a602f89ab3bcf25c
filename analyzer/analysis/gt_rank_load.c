/* gt_rank_load.c: a rank's summary read back from the file `gputrace
 * summarize` wrote (output/gt_rank_summary_out.c; docs/ranks.md). A file
 * that is not one, or of a newer format, is refused with the reason. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/gt_ranks.h"
#include "base/gt_err.h"
#include "base/gt_json.h"

static char *gt_slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    while (buf) {
        size_t got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (n < cap)
            break;
        char *b = realloc(buf, cap * 2);
        if (!b) {
            free(buf);
            buf = NULL;
            break;
        }
        buf = b;
        cap *= 2;
    }
    int bad = ferror(f);
    fclose(f);
    if (bad) {
        free(buf);
        return NULL;
    }
    *len = n;
    return buf;
}

static int gt_cause_of(const char *name)
{
    for (int c = 0; c < GT_CAUSES; c++)
        if (strcmp(gt_cause_names[c], name) == 0)
            return c;
    return GT_CAUSE_OTHER;
}

static void gt_copy(char *dst, size_t len, const char *src)
{
    snprintf(dst, len, "%s", src ? src : "");
}

int gt_rank_sum_load(const char *path, struct gt_rank_sum *s)
{
    memset(s, 0, sizeof(*s));
    size_t len;
    char *text = gt_slurp(path, &len);
    if (!text) {
        gt_err("%s: %s", path, strerror(errno ? errno : EIO));
        return -1;
    }
    struct gt_json j;
    char err[128];
    int rc = gt_json_parse(text, len, &j, err, sizeof(err));
    free(text);
    if (rc < 0) {
        gt_err("%s: not a gputrace rank summary (JSON: %s)", path, err);
        return -1;
    }
    const char *tool = gt_json_str(&j, "tool", NULL);
    int64_t format = gt_json_i64(&j, "format", -1);
    if (!tool || strcmp(tool, "gputrace") != 0 || format < 1) {
        gt_err("%s: not a gputrace rank summary (written by 'gputrace summarize')", path);
        gt_json_free(&j);
        return -1;
    }
    if (format > GT_RANK_SUMMARY_FORMAT) {
        gt_err("%s: summary format %lld is newer than this gputrace reads (%d)", path, (long long)format,
               GT_RANK_SUMMARY_FORMAT);
        gt_json_free(&j);
        return -1;
    }
    gt_copy(s->path, sizeof(s->path), gt_json_str(&j, "path", path));
    s->pid = (long long)gt_json_i64(&j, "pid", 0);
    const char *rank = gt_json_str(&j, "rank", NULL);
    if (rank) {
        gt_copy(s->rank, sizeof(s->rank), rank);
        s->has_rank = 1;
    } else {
        snprintf(s->rank, sizeof(s->rank), "pid %lld", s->pid);
    }
    gt_copy(s->host, sizeof(s->host), gt_json_str(&j, "host", ""));
    s->complete = (int)gt_json_u64(&j, "complete", 0);
    s->gpu_times = (int)gt_json_u64(&j, "gpu_times", 0);
    s->start_ns = gt_json_i64(&j, "start_ns", 0);
    s->start_unix_ns = gt_json_i64(&j, "start_unix_ns", 0);
    s->first_ns = gt_json_u64(&j, "first_ns", 0);
    const struct gt_json *m = gt_json_get(&j, "summary");
    s->s.first_ns = s->first_ns;
    s->s.gpu_times = s->gpu_times;
    s->s.span_ns = gt_json_u64(m, "span_ns", 0);
    s->s.busy_ns = gt_json_u64(m, "busy_ns", 0);
    s->s.idle_ns = gt_json_u64(m, "idle_ns", 0);
    const struct gt_json *ic = gt_json_get(m, "idle_by_cause_ns");
    for (int c = 0; c < GT_CAUSES; c++)
        s->s.idle_by_cause[c] = gt_json_u64(ic, gt_cause_names[c], 0);
    s->s.calls = gt_json_u64(m, "calls", 0);
    s->s.launches = gt_json_u64(m, "launches", 0);
    s->s.launch_host_ns = gt_json_u64(m, "launch_host_ns", 0);
    s->s.kernel_ns = gt_json_u64(m, "kernel_ns", 0);
    s->s.sync_ns = gt_json_u64(m, "sync_ns", 0);
    s->s.h2d_bytes = gt_json_u64(m, "h2d_bytes", 0);
    s->s.pageable_h2d_bytes = gt_json_u64(m, "pageable_h2d_bytes", 0);
    s->coll_ns = gt_json_u64(&j, "collective_ns", 0);
    s->ncoll_all = (size_t)gt_json_u64(&j, "collectives_total", 0);
    const struct gt_json *names = gt_json_get(&j, "collective_names");
    const struct gt_json *colls = gt_json_get(&j, "collectives");
    const struct gt_json *ranges = gt_json_get(&j, "ranges");
    const struct gt_json *gaps = gt_json_get(&j, "gaps");
    rc = 0;
    if (names && names->type == GT_J_ARR && names->n) {
        s->names = calloc(names->n, sizeof(*s->names));
        for (size_t i = 0; s->names && i < names->n; i++) {
            s->names[i] = strdup(names->items[i].type == GT_J_STR ? names->items[i].str : "");
            if (!s->names[i])
                rc = -1;
            s->nnames++;
        }
        if (!s->names)
            rc = -1;
    }
    if (rc == 0 && colls && colls->type == GT_J_ARR && colls->n) {
        s->coll = calloc(colls->n, sizeof(*s->coll));
        if (!s->coll)
            rc = -1;
        for (size_t i = 0; rc == 0 && i < colls->n; i++) {
            const struct gt_json *r = &colls->items[i];
            if (r->type != GT_J_ARR || r->n < 8) {
                gt_err("%s: collective %zu is not a row of 8 numbers", path, i);
                rc = -2;
                break;
            }
            struct gt_rank_coll *c = &s->coll[s->ncoll++];
            c->name = (uint32_t)r->items[0].u64;
            if (c->name >= s->nnames) {
                gt_err("%s: collective %zu names kernel %u of %zu", path, i, c->name, s->nnames);
                rc = -2;
                break;
            }
            c->stream = (uint32_t)r->items[1].u64;
            c->ordinal = (uint32_t)r->items[2].u64;
            c->launch_ns = s->first_ns + (uint64_t)r->items[3].i64;
            c->start_ns = s->first_ns + (uint64_t)r->items[4].i64;
            c->end_ns = s->first_ns + (uint64_t)r->items[5].i64;
            int64_t ri = r->items[6].i64;
            c->where.index = r->items[7].i64;
            if (ri >= 0 && ranges && (size_t)ri < ranges->n && ranges->items[ri].type == GT_J_STR)
                gt_copy(c->where.range, sizeof(c->where.range), ranges->items[ri].str);
            else
                c->where.index = -1;
            /* the step: a 9th number (summaries of gputrace before it have 8: no steps) */
            c->step = r->n >= 9 ? r->items[8].i64 : -1;
        }
    }
    for (size_t i = 0; rc == 0 && gaps && gaps->type == GT_J_ARR && i < gaps->n && i < GT_RANK_GAPS; i++) {
        const struct gt_json *g = &gaps->items[i];
        struct gt_rank_gap *x = &s->gaps[s->ngaps++];
        x->start_ns = gt_json_u64(g, "start_ns", 0);
        x->dur_ns = gt_json_u64(g, "dur_ns", 0);
        x->cause = gt_cause_of(gt_json_str(g, "cause", ""));
        gt_copy(x->after, sizeof(x->after), gt_json_str(g, "after", ""));
        gt_copy(x->before, sizeof(x->before), gt_json_str(g, "before", ""));
        gt_copy(x->after_api, sizeof(x->after_api), gt_json_str(g, "after_api", ""));
        gt_copy(x->where.range, sizeof(x->where.range), gt_json_str(g, "range", ""));
        x->where.index = gt_json_i64(g, "range_index", -1);
    }
    gt_json_free(&j);
    if (rc == -1)
        gt_err("%s: out of memory", path);
    if (rc < 0)
        gt_rank_sum_free(s);
    return rc < 0 ? -1 : 0;
}
