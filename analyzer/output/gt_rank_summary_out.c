/* gt_rank_summary_out.c: a rank's summary file (`gputrace summarize`), the
 * JSON docs/ranks.md describes key by key; read back by
 * analysis/gt_rank_load.c. Collectives are rows of numbers with times
 * relative to first_ns, so a summary of 12,000 collectives stays under
 * 1 MiB. */
#include <stdio.h>
#include <string.h>

#include "analysis/gt_ranks.h"
#include "base/gt_fmt.h"
#include "output/gt_rank_out.h"

#define U(x) ((unsigned long long)(x))

static int gt_range_id(const char **names, size_t *n, const char *name)
{
    if (!name[0])
        return -1;
    for (size_t i = 0; i < *n; i++)
        if (strcmp(names[i], name) == 0)
            return (int)i;
    if (*n >= 4096)
        return -1;
    names[*n] = name;
    return (int)(*n)++;
}

void gt_rank_summary_write(FILE *out, const struct gt_rank_sum *s, const char *version)
{
    fprintf(out, "{\"format\":%d,\"tool\":\"gputrace\",\"tool_version\":\"%s\",\"path\":", GT_RANK_SUMMARY_FORMAT,
            version);
    gt_put_json_string(out, s->path);
    fputs(",\"rank\":", out);
    gt_put_json_string(out, s->has_rank ? s->rank : NULL);
    fputs(",\"host\":", out);
    gt_put_json_string(out, s->host);
    fprintf(out, ",\"pid\":%lld,\"complete\":%s,\"gpu_times\":%s,\"start_ns\":%lld,\"start_unix_ns\":%lld,"
                 "\"first_ns\":%llu,\n\"summary\":{\"span_ns\":%llu,\"busy_ns\":%llu,\"idle_ns\":%llu,"
                 "\"idle_by_cause_ns\":{",
            s->pid, s->complete ? "true" : "false", s->gpu_times ? "true" : "false", (long long)s->start_ns,
            (long long)s->start_unix_ns, U(s->first_ns), U(s->s.span_ns), U(s->s.busy_ns), U(s->s.idle_ns));
    for (int c = 0; c < GT_CAUSES; c++)
        fprintf(out, "%s\"%s\":%llu", c ? "," : "", gt_cause_names[c], U(s->s.idle_by_cause[c]));
    fprintf(out, "},\"calls\":%llu,\"launches\":%llu,\"launch_host_ns\":%llu,\"kernel_ns\":%llu,\"sync_ns\":%llu,"
                 "\"h2d_bytes\":%llu,\"pageable_h2d_bytes\":%llu},\n\"collective_ns\":%llu,\"collectives_total\":%llu,"
                 "\"collective_names\":[",
            U(s->s.calls), U(s->s.launches), U(s->s.launch_host_ns), U(s->s.kernel_ns), U(s->s.sync_ns),
            U(s->s.h2d_bytes), U(s->s.pageable_h2d_bytes), U(s->coll_ns), U(s->ncoll_all));
    for (size_t i = 0; i < s->nnames; i++) {
        fputs(i ? "," : "", out);
        gt_put_json_string(out, s->names[i]);
    }
    /* range names, numbered as first met */
    const char *ranges[4096];
    size_t nranges = 0;
    fputs("],\n\"collectives\":[", out);
    for (size_t i = 0; i < s->ncoll; i++) {
        const struct gt_rank_coll *c = &s->coll[i];
        fprintf(out, "%s[%u,%u,%u,%lld,%lld,%lld,%d,%lld,%lld]", i ? ",\n" : "", c->name, c->stream, c->ordinal,
                (long long)(c->launch_ns - s->first_ns), (long long)(c->start_ns - s->first_ns),
                (long long)(c->end_ns - s->first_ns), gt_range_id(ranges, &nranges, c->where.range),
                (long long)c->where.index, (long long)c->step);
    }
    fputs("],\n\"gaps\":[", out);
    for (size_t i = 0; i < s->ngaps; i++) {
        const struct gt_rank_gap *g = &s->gaps[i];
        fprintf(out, "%s{\"start_ns\":%llu,\"dur_ns\":%llu,\"cause\":\"%s\",\"after\":", i ? ",\n" : "",
                U(g->start_ns), U(g->dur_ns), gt_cause_names[g->cause]);
        gt_put_json_string(out, g->after);
        fputs(",\"before\":", out);
        gt_put_json_string(out, g->before);
        fputs(",\"after_api\":", out);
        gt_put_json_string(out, g->after_api);
        fputs(",\"range\":", out);
        gt_put_json_string(out, g->where.range);
        fprintf(out, ",\"range_index\":%lld}", (long long)g->where.index);
    }
    fputs("],\n\"ranges\":[", out);
    for (size_t i = 0; i < nranges; i++) {
        fputs(i ? "," : "", out);
        gt_put_json_string(out, ranges[i]);
    }
    fputs("]}\n", out);
}
