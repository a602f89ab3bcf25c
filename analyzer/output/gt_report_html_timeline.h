/* gt_report_html_timeline.h: the HTML report's interactive timeline: a lane
 * per GPU stream (its kernels, copies, memsets), one of idle gaps per GPU,
 * one per calling thread (its CUDA calls) and one per thread with NVTX
 * ranges, drawn by an embedded script from JSON the page carries. */
#ifndef GT_REPORT_HTML_TIMELINE_H
#define GT_REPORT_HTML_TIMELINE_H

#include <stdint.h>
#include <stdio.h>

#include "analysis/gt_analyze.h"
#include "base/gt_map.h"
#include "trace/gt_trace.h"

/* Each lane keeps at most this many items: past it, items closer than a
 * quantum (doubled until they fit) are merged into one, so the page stays
 * a few MB whatever the trace's size (the page says when it happened). */
#define GT_TL_LANE_CAP 20000
/* Lanes of each kind kept; the page says how many it left out. */
#define GT_TL_MAX_LANES 64
/* NVTX nesting levels drawn per thread. */
#define GT_TL_MAX_LEVELS 16

enum gt_tl_kind { GT_TL_STREAM, GT_TL_THREAD, GT_TL_RANGES };

#define GT_TL_MIXED UINT32_MAX /* a merged item of more than one name */

struct gt_tl_item {
    int64_t s, e;      /* relative to the trace's first_ns */
    uint32_t name;     /* index into names, or GT_TL_MIXED */
    uint32_t n;        /* items merged into it */
    int32_t level;     /* NVTX nesting level; 0 elsewhere */
};

struct gt_tl_lane {
    int kind;
    int64_t a, b;      /* stream lanes: device, stream; others: tid */
    char *label;
    struct gt_tl_item *v;
    size_t n, cap;
    uint64_t total;    /* items before merging */
    uint64_t q;        /* merge quantum in ns; 0: every item is its own */
    int levels;
};

struct gt_tl {
    int loaded;
    uint64_t t0, span;
    struct gt_tl_lane *lanes;
    size_t nlanes, caplanes;
    uint64_t dropped[3];        /* lanes left out, by kind */
    uint64_t dropped_ranges;    /* ranges nested deeper than GT_TL_MAX_LEVELS */
    char **names;
    size_t nnames, capnames;
    struct gt_map name_idx;     /* text hash -> index + 1 */
    struct gt_tl_scan *scan;    /* while the report's pass feeds it */
};

/* The lanes are filled by the report's own pass (gt_analyze with *tap in
 * its options; no pass of their own): gt_tl_begin before it (win: the
 * report's window, NULL for none), then
 * gt_tl_finish once it filled r (the report's start and span, NVTX
 * ranges). Each returns 0, or -1 (out of memory; a message for SQL). */
int gt_tl_begin(struct gt_tl *tl, struct gt_trace *t, const struct gt_window *win, struct gt_analyze_tap *tap);
int gt_tl_finish(struct gt_trace *t, const struct gt_report *r, struct gt_tl *tl);
void gt_tl_free(struct gt_tl *tl);

/* The script and style, once per page, before the first section. */
void gt_tl_assets(FILE *out);
/* One trace's timeline; its gaps link to rows id="gap-SECTION-I". */
void gt_tl_write(FILE *out, const struct gt_tl *tl, const struct gt_report *r, int section);

#endif
