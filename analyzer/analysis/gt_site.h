/* gt_site.h: a call's site, from its native and Python stacks, computed
 * once per distinct pair. */
#ifndef GT_SITE_H
#define GT_SITE_H

#include <sqlite3.h>
#include <stdio.h>
#include <stdint.h>

#include "analysis/gt_analyze.h"
#include "analysis/gt_site_nvcc.h"


/* The outermost frame of a native-only site in a process that ran Python. */
#define GT_SITE_NO_PYTHON "(no Python frame)"

struct gt_site_slot {
    int64_t key;
    struct gt_site *site;
};

struct gt_sites {
    int64_t max_id;
    struct gt_site **cache;       /* native-only sites, by stack id */
    struct gt_site_slot *mixed;   /* sites with Python frames, by key */
    size_t mixed_cap, mixed_count;
    sqlite3_stmt *frames, *pyframes;
    struct gt_nvcc nvcc;          /* the launched kernels, to know nvcc's wrappers by */
    struct gt_site none;          /* the site of a call without a stack */
    /* Sites by text, one index each: different stacks often read the same
     * (their innermost user frames agree), and the analyses group by what
     * they read. */
    struct gt_site **canon;       /* by index */
    size_t ncanon, canon_cap;
    uint32_t *canon_slot;         /* hash of text -> index + 1 */
    size_t canon_slots;
    struct gt_site *pseudo[4];    /* sites that are no call's: "(no recorded call)"... */
    int npseudo;
    int64_t offset_less;          /* 1: the trace stores return addresses' offsets (before version 5) */
    int python;                   /* the process ran Python: native-only sites say they have no Python frame */
    int has_last;                 /* the last key asked for, and its index */
    int64_t last_key;
    uint32_t last_index;
};

/* schema_version: the trace's, which says whether native frames' offsets
 * are of the return address (before 5) or of the call (5 on). */
int gt_sites_init(struct gt_sites *s, sqlite3 *db, int schema_version);
/* Never NULL: a stack-less call gets a site reading "(no stack)". */
const struct gt_site *gt_site_of(struct gt_sites *s, int64_t key);
void gt_sites_free(struct gt_sites *s);
/* The index of the site of `key` among the distinct site texts, from 0;
 * UINT32_MAX when out of memory. */
uint32_t gt_site_index(struct gt_sites *s, int64_t key);
const struct gt_site *gt_site_by_index(struct gt_sites *s, uint32_t index);
/* The index of a site that is no call's, reading `text` (one frame). */
uint32_t gt_site_pseudo(struct gt_sites *s, const char *text);
/* How many distinct site texts have been given an index. */
size_t gt_site_count(const struct gt_sites *s);
/* A site as a JSON array of its frames, innermost first. */
void gt_site_put_json(FILE *out, const struct gt_site *s);

#endif
