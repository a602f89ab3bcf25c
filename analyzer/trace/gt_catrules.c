/* gt_catrules.c: kernel category rules, read from the trace, a user's
 * file and the compiled-in defaults; matched with SQLite's own GLOB
 * (sqlite3_strglob), so a name falls in the category the SQL view
 * kernel_categories gives it. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace/gt_catrules.h"
#include "gt_kernel_categories_tsv.h"

const char *const gt_catrules_default_tsv = (const char *)kernel_categories_tsv;
const size_t gt_catrules_default_len = kernel_categories_tsv_len;

static int gt_catrules_add(struct gt_catrules *r, const char *pat, size_t np, const char *cat, size_t nc)
{
    if (r->n == r->cap) {
        size_t cap = r->cap ? r->cap * 2 : 64;
        struct gt_catrule *v = realloc(r->v, cap * sizeof(*v));
        if (!v)
            return -1;
        r->v = v;
        r->cap = cap;
    }
    struct gt_catrule *x = &r->v[r->n];
    x->pattern = strndup(pat, np);
    x->category = strndup(cat, nc);
    if (!x->pattern || !x->category) {
        free(x->pattern);
        free(x->category);
        return -1;
    }
    r->n++;
    return 0;
}

int gt_catrules_parse(struct gt_catrules *r, const char *text, size_t len, size_t *line)
{
    const char *p = text, *end = text + len;
    size_t no = 0;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *eol = nl ? nl : end;
        no++;
        const char *e = eol;
        while (e > p && (e[-1] == '\r' || e[-1] == ' '))
            e--;
        if (e > p && *p != '#') {
            const char *tab = memchr(p, '\t', (size_t)(e - p));
            const char *cat = tab;
            while (cat && cat < e && *cat == '\t')
                cat++;
            /* a category is one word: a pattern with a space in it is fine */
            if (!tab || tab == p || cat == e || memchr(cat, '\t', (size_t)(e - cat)) ||
                memchr(cat, ' ', (size_t)(e - cat))) {
                *line = no;
                return -1;
            }
            if (gt_catrules_add(r, p, (size_t)(tab - p), cat, (size_t)(e - cat)) < 0) {
                *line = 0;
                return -1;
            }
        }
        p = nl ? nl + 1 : end;
    }
    return 0;
}

static int gt_catrules_user(struct gt_catrules *r, const char *path)
{
    FILE *f = fopen(path, "re");
    if (!f) {
        fprintf(stderr, "gputrace: %s: cannot read the kernel categories: %s\n", path, strerror(errno));
        return -1;
    }
    char *text = NULL;
    size_t len = 0, cap = 0, n;
    char buf[1 << 14];
    while ((n = fread(buf, 1, sizeof(buf), f)) > 0) {
        if (len + n > cap) {
            cap = (len + n) * 2;
            char *g = realloc(text, cap);
            if (!g) {
                free(text);
                fclose(f);
                return -1;
            }
            text = g;
        }
        memcpy(text + len, buf, n);
        len += n;
    }
    int bad = ferror(f);
    fclose(f);
    size_t line = 0;
    int rc = bad ? -1 : gt_catrules_parse(r, text ? text : "", len, &line);
    free(text);
    if (rc < 0) {
        if (bad)
            fprintf(stderr, "gputrace: %s: cannot read the kernel categories\n", path);
        else if (line)
            fprintf(stderr, "gputrace: %s:%zu: not a category rule (a GLOB pattern, a tab, a category: "
                            "docs/report.md, \"Kernel categories\")\n", path, line);
        return -1;
    }
    return 0;
}

int gt_catrules_load(struct gt_trace *t, const char *user, struct gt_catrules *r)
{
    memset(r, 0, sizeof(*r));
    if (!user) {
        const char *env = getenv("GPUTRACE_CATEGORIES");
        user = env && *env ? env : NULL;
    }
    if (user && gt_catrules_user(r, user) < 0) {
        gt_catrules_free(r);
        return -1;
    }
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(t->db, "SELECT pattern, category FROM kernel_category_rules ORDER BY priority", -1, &st,
                           NULL) != SQLITE_OK) {
        gt_trace_sql_error(t, "kernel_category_rules");
        gt_catrules_free(r);
        return -1;
    }
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        const char *p = (const char *)sqlite3_column_text(st, 0), *c = (const char *)sqlite3_column_text(st, 1);
        if (p && c && gt_catrules_add(r, p, strlen(p), c, strlen(c)) < 0)
            break;
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) {
        gt_trace_sql_error(t, "kernel_category_rules");
        gt_catrules_free(r);
        return -1;
    }
    return 0;
}

int gt_catrules_check(const char *path)
{
    struct gt_catrules r = {0};
    int rc = gt_catrules_user(&r, path);
    gt_catrules_free(&r);
    return rc;
}

const char *gt_catrules_match(const struct gt_catrules *r, const char *name)
{
    if (name)
        for (size_t i = 0; i < r->n; i++)
            if (sqlite3_strglob(r->v[i].pattern, name) == 0)
                return r->v[i].category;
    return "other";
}

void gt_catrules_free(struct gt_catrules *r)
{
    for (size_t i = 0; i < r->n; i++) {
        free(r->v[i].pattern);
        free(r->v[i].category);
    }
    free(r->v);
    memset(r, 0, sizeof(*r));
}

int gt_catrules_shim(sqlite3 *db)
{
    struct gt_catrules d = {0};
    size_t line;
    if (gt_catrules_parse(&d, gt_catrules_default_tsv, gt_catrules_default_len, &line) < 0)
        return SQLITE_NOMEM;
    /* the same table and view as schema/gputrace.sql's, in the temp schema */
    int rc = sqlite3_exec(db,
                          "CREATE TEMP TABLE kernel_category_rules (priority INTEGER PRIMARY KEY, pattern TEXT NOT NULL, "
                          "category TEXT NOT NULL);"
                          "CREATE TEMP VIEW kernel_categories AS SELECT k.*, COALESCE((SELECT r.category FROM "
                          "kernel_category_rules r WHERE k.name GLOB r.pattern ORDER BY r.priority LIMIT 1), 'other') "
                          "AS category FROM kernels k;",
                          NULL, NULL, NULL);
    sqlite3_stmt *st = NULL;
    if (rc == SQLITE_OK)
        rc = sqlite3_prepare_v2(db, "INSERT INTO temp.kernel_category_rules VALUES (?, ?, ?)", -1, &st, NULL);
    for (size_t i = 0; rc == SQLITE_OK && i < d.n; i++) {
        sqlite3_bind_int64(st, 1, (sqlite3_int64)i + 1);
        sqlite3_bind_text(st, 2, d.v[i].pattern, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 3, d.v[i].category, -1, SQLITE_STATIC);
        rc = sqlite3_step(st) == SQLITE_DONE ? SQLITE_OK : sqlite3_errcode(db);
        sqlite3_reset(st);
    }
    sqlite3_finalize(st);
    gt_catrules_free(&d);
    return rc;
}
