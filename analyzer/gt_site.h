/* gt_site.h: a call's site, from its native and Python stacks, computed
 * once per distinct pair. */
#ifndef GT_SITE_H
#define GT_SITE_H

#include <sqlite3.h>
#include <stdio.h>
#include <stdint.h>

#include "gt_analyze.h"

/* The SQL for a call's site key, from a row `c` of calls or api_calls: its
 * native stack id in the low 32 bits, its Python stack id in the high. */
#define GT_SITE_KEY(c) "(COALESCE(" c ".stack_id, 0) | (COALESCE(" c ".pystack_id, 0) << 32))"

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
};

int gt_sites_init(struct gt_sites *s, sqlite3 *db);
/* Never NULL: a stack-less call gets a site reading "(no stack)". */
const struct gt_site *gt_site_of(struct gt_sites *s, int64_t key);
void gt_sites_free(struct gt_sites *s);
/* A site as a JSON array of its frames, innermost first. */
void gt_site_put_json(FILE *out, const struct gt_site *s);

#endif
