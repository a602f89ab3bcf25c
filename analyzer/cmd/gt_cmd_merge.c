/* gt_cmd_merge.c: `gputrace merge -o JOB.db TRACE.db...`: traces of many
 * ranks in one SQLite file for SQL across them (docs/ranks.md). */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd/gt_cmds.h"
#include "output/gt_merge.h"
#include "trace/gt_trace.h"

void gt_cmd_merge_usage(FILE *out)
{
    fprintf(out, "usage: gputrace merge -o JOB.db TRACE.db...\n"
                 "\n"
                 "Copies the public views of each trace (api_calls, kernels, memcpys,\n"
                 "memsets, syncs, allocations, gpu_activity, stack_frames, py_stack_frames,\n"
                 "ranges, marks, thread_names, stream_names) into tables of the same names\n"
                 "in one new SQLite file, each row with its trace's rank first (meta.rank,\n"
                 "else 'pid N'); table traces says which file each rank came from, table\n"
                 "meta holds every trace's meta. For SQL across hundreds of ranks\n"
                 "(docs/ranks.md). The traces are read, never modified.\n"
                 "\n"
                 "options:\n"
                 "  -o, --output FILE   the file to write (must not exist)\n"
                 "\n"
                 "exit status: 0; 1 if writing failed; 2 for bad arguments, an output that\n"
                 "exists, a trace that cannot be read, or one run given twice (the same\n"
                 "file or a copy of it; nothing is written then).\n");
}

int gt_cmd_merge(int argc, char **argv)
{
    static const struct option longs[] = {{"output", required_argument, NULL, 'o'},
                                          {"help", no_argument, NULL, 'h'},
                                          {NULL, 0, NULL, 0}};
    const char *output = NULL;
    optind = 1;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, "ho:", longs, NULL)) != -1) {
        switch (c) {
        case 'o':
            output = optarg;
            break;
        case 'h':
            gt_cmd_merge_usage(stdout);
            return GT_EXIT_OK;
        default:
            return gt_usage_error("merge", "unknown option '%s'", argv[optind - 1]);
        }
    }
    if (!output)
        return gt_usage_error("merge", "-o JOB.db is needed");
    if (optind >= argc)
        return gt_usage_error("merge", "no trace given");
    struct stat sb;
    if (stat(output, &sb) == 0) {
        gt_err("%s exists; merge writes a new file (remove it first)", output);
        return GT_EXIT_USAGE;
    }
    /* every input readable first, and each run once (the same file or a
     * copy of it would double its rows, as report refuses): a bad one
     * costs nothing */
    int n = argc - optind, bad = 0;
    struct gt_run_id {
        char *host;
        int64_t pid, start_ns;
    } *ids = calloc((size_t)n, sizeof(*ids));
    if (!ids) {
        gt_err("merge: out of memory");
        return GT_EXIT_FAIL;
    }
    for (int i = 0; i < n && !bad; i++) {
        struct gt_trace t;
        if (gt_trace_open(&t, argv[optind + i]) != 0) {
            bad = 1;
            break;
        }
        ids[i].host = gt_trace_meta(&t, "host");
        ids[i].pid = gt_trace_meta_int(&t, "pid", 0);
        ids[i].start_ns = gt_trace_meta_int(&t, "start_ns", -1);
        gt_trace_close(&t);
        for (int j = 0; j < i && !bad; j++) {
            if (ids[j].pid != ids[i].pid || ids[j].start_ns != ids[i].start_ns ||
                (ids[j].host == NULL) != (ids[i].host == NULL) ||
                (ids[j].host && strcmp(ids[j].host, ids[i].host) != 0))
                continue;
            gt_err("%s and %s are the same run (host %s, pid %lld, started at %lld): each trace may be merged "
                   "once", argv[optind + j], argv[optind + i], ids[i].host ? ids[i].host : "?",
                   (long long)ids[i].pid, (long long)ids[i].start_ns);
            bad = 1;
        }
    }
    for (int i = 0; i < n; i++)
        free(ids[i].host);
    free(ids);
    if (bad)
        return GT_EXIT_USAGE;
    char tmp[4096];
    snprintf(tmp, sizeof(tmp), "%s.tmp-%ld", output, (long)getpid());
    sqlite3 *out = NULL;
    if (sqlite3_open_v2(tmp, &out, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL) != SQLITE_OK) {
        gt_err("cannot write %s: %s", output, out ? sqlite3_errmsg(out) : "out of memory");
        sqlite3_close(out);
        unlink(tmp);
        return GT_EXIT_FAIL;
    }
    int rc = gt_merge_begin(out, output);
    uint64_t rows = 0;
    for (int i = optind; rc == 0 && i < argc; i++) {
        struct gt_trace t;
        if (gt_trace_open(&t, argv[i]) != 0) {
            rc = -2;
            break;
        }
        rc = gt_merge_one(out, output, &t, &rows);
        gt_trace_close(&t);
    }
    if (sqlite3_close(out) != SQLITE_OK && rc == 0)
        rc = -1;
    if (rc == 0 && rename(tmp, output) != 0) {
        gt_err("cannot write %s: %s", output, strerror(errno));
        rc = -1;
    }
    if (rc != 0) {
        unlink(tmp);
        return rc == -2 ? GT_EXIT_USAGE : GT_EXIT_FAIL;
    }
    fprintf(stderr, "gputrace: merged %d traces, %llu rows, into %s\n", argc - optind, (unsigned long long)rows,
            output);
    return GT_EXIT_OK;
}
