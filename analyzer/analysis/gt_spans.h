/* gt_spans.h: every call's category, host times, site and entry point,
 * logged compactly as the calls are first read (about 9 bytes a call:
 * deltas, lengths, site and entry point as varints), and replayed in start order for the timeline's sweep. Reading
 * them from memory rather than a second time from SQLite, through its
 * start-time index, is what keeps `report` on ten million calls within its
 * time budget. Past GT_SPANLOG_MEM the log goes on in an unlinked
 * temporary file (in $TMPDIR, else /tmp), read back in order. */
#ifndef GT_SPANS_H
#define GT_SPANS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "analysis/gt_site.h"
#include "trace/gt_scan.h"

#define GT_SPANLOG_MEM (4u << 20)

struct gt_spanlog {
    uint8_t *buf;           /* the log after what went to the file */
    FILE *file;             /* NULL: none went */
    uint64_t spilled;       /* bytes in the file */
    size_t len, cap, n;
    uint64_t prev;           /* the last start logged */
    uint64_t max_start;      /* the latest start so far */
    uint64_t lateness;       /* how far a start lay behind the latest before it, at most */
    int failed;
};

/* One call as the sweep takes it: site is the index of its site
 * (gt_site_index), api of its entry point (gt_rec.api). */
typedef void (*gt_spanlog_fn)(int cat, uint64_t start, uint64_t end, uint32_t site, uint32_t api, void *arg);

/* Logs one call; on running out of memory the log stops (failed). */
void gt_spanlog_add(struct gt_spanlog *l, int cat, uint64_t start, uint64_t end, uint32_t site, uint32_t api);
/* Every logged call, by start time. A call starts at most `lateness`
 * before any logged before it, so a buffer of the calls within that time
 * of the latest puts them in order. 0; -1 when out of memory. */
int gt_spanlog_replay(const struct gt_spanlog *l, gt_spanlog_fn fn, void *arg);
void gt_spanlog_free(struct gt_spanlog *l);
/* The same calls read again from the trace, by start time (SQLite sorts
 * them), their sites named by index as the log names them. */
int gt_spans_scan(struct gt_scan *scan, struct gt_sites *sites, gt_spanlog_fn fn, void *arg);

#endif
