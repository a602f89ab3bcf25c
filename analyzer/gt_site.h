/* gt_site.h: stack id -> call site, computed once per stack. */
#ifndef GT_SITE_H
#define GT_SITE_H

#include <sqlite3.h>
#include <stdint.h>

#include "gt_analyze.h"

struct gt_sites {
    int64_t max_id;
    struct gt_site **cache;
    sqlite3_stmt *frames;
};

int gt_sites_init(struct gt_sites *s, sqlite3 *db);
/* Never NULL: a stack-less call gets a site reading "(no stack)". */
const struct gt_site *gt_site_of(struct gt_sites *s, int64_t stack_id);
void gt_sites_free(struct gt_sites *s);

#endif
