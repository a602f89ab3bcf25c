/* gt_flame.c: the flame graph's tree (gt_flame.h). Nodes are found by a
 * hash of their parent and name; a 64-bit hash collision would merge two
 * siblings' names into the first, as the by-stack table's does. */
#include <stdlib.h>
#include <string.h>

#include "analysis/gt_flame.h"

struct gt_fnode {
    uint32_t parent, name;
    uint16_t depth;
    uint8_t kind;
    uint64_t idle_ns, samples;
};

static long gt_flame_text(struct gt_flame_b *f, const char *s)
{
    size_t len = strlen(s) + 1;
    if (f->tlen + len > f->tcap) {
        size_t cap = f->tcap ? f->tcap * 2 : 4096;
        while (cap < f->tlen + len)
            cap *= 2;
        char *t = realloc(f->text, cap);
        if (!t)
            return -1;
        f->text = t;
        f->tcap = cap;
    }
    memcpy(f->text + f->tlen, s, len);
    f->tlen += len;
    return (long)(f->tlen - len);
}

static long gt_flame_node(struct gt_flame_b *f, uint32_t parent, uint16_t depth, const char *name, uint8_t kind)
{
    if (f->n == f->cap) {
        size_t cap = f->cap ? f->cap * 2 : 256;
        void *v = realloc(f->v, cap * sizeof(*f->v));
        if (!v)
            return -1;
        f->v = v;
        f->cap = cap;
    }
    long t = gt_flame_text(f, name);
    if (t < 0 || (uint64_t)t > UINT32_MAX)
        return -1;
    f->v[f->n] = (struct gt_fnode){parent, (uint32_t)t, depth, kind, 0, 0};
    return (long)f->n++;
}

int gt_flame_init(struct gt_flame_b *f, const char *name)
{
    memset(f, 0, sizeof(*f));
    return gt_flame_node(f, 0, 0, name, GT_FK_ROOT) < 0 ? -1 : 0;
}

long gt_flame_child(struct gt_flame_b *f, uint32_t parent, const char *name, uint8_t kind)
{
    uint64_t h = (gt_map_hash_text(name) ^ ((uint64_t)(parent + 1) * 0x9E3779B97F4A7C15ull)) | 1;
    int64_t *slot = gt_map_at(&f->child, h);
    if (!slot)
        return -1;
    if (*slot)
        return (long)(*slot - 1);
    /* deeper than 16 bits of depth cannot come from stacks of at most
     * GT_STACK_MAX_DEPTH frames; refused all the same */
    if (f->v[parent].depth == UINT16_MAX)
        return -1;
    long i = gt_flame_node(f, parent, (uint16_t)(f->v[parent].depth + 1), name, kind);
    if (i < 0)
        return -1;
    /* the node array may have moved, the map's slot has not */
    *slot = i + 1;
    return i;
}

void gt_flame_add(struct gt_flame_b *f, uint32_t node, uint64_t ns, uint64_t samples)
{
    for (;;) {
        f->v[node].idle_ns += ns;
        f->v[node].samples += samples;
        if (!node)
            return;
        node = f->v[node].parent;
    }
}

void gt_flame_set_root(struct gt_flame_b *f, uint64_t ns)
{
    f->v[0].idle_ns = ns;
}

/* Children by time, most first, then by name, for a layout that reads the
 * same every time. */
static const struct gt_flame_b *gt_sort_f;
static int gt_child_cmp(const void *a, const void *b)
{
    const struct gt_fnode *x = &gt_sort_f->v[*(const uint32_t *)a], *y = &gt_sort_f->v[*(const uint32_t *)b];
    if (x->idle_ns != y->idle_ns)
        return x->idle_ns > y->idle_ns ? -1 : 1;
    return strcmp(gt_sort_f->text + x->name, gt_sort_f->text + y->name);
}

int gt_flame_finish(struct gt_flame_b *f, struct gt_report *r)
{
    /* each node's children, contiguous: first[p] .. first[p + 1] in kids */
    size_t n = f->n;
    uint32_t *first = calloc(n + 1, sizeof(*first)), *fill = calloc(n + 1, sizeof(*fill));
    uint32_t *kids = malloc(n * sizeof(*kids)), *todo = malloc(n * sizeof(*todo));
    uint64_t *at = malloc(n * sizeof(*at));
    struct gt_flame_node *out = malloc(n * sizeof(*out));
    int rc = -1;
    if (!first || !fill || !kids || !todo || !at || !out)
        goto done;
    for (size_t i = 1; i < n; i++)
        first[f->v[i].parent + 1]++;
    for (size_t i = 0; i < n; i++)
        first[i + 1] += first[i];
    for (size_t i = 1; i < n; i++) {
        uint32_t p = f->v[i].parent;
        kids[first[p] + fill[p]++] = (uint32_t)i;
    }
    gt_sort_f = f;
    for (size_t i = 0; i < n; i++)
        if (first[i + 1] - first[i] > 1)
            qsort(kids + first[i], first[i + 1] - first[i], sizeof(*kids), gt_child_cmp);
    /* preorder, by an explicit stack: children pushed last first */
    uint64_t root = f->v[0].idle_ns;
    size_t ntodo = 0, nout = 0, hidden = 0;
    todo[ntodo++] = 0;
    at[0] = 0;
    while (ntodo) {
        uint32_t i = todo[--ntodo];
        const struct gt_fnode *x = &f->v[i];
        out[nout++] = (struct gt_flame_node){x->name, x->depth, x->kind, x->idle_ns, at[i], x->samples};
        uint64_t cur = at[i];
        for (uint32_t k = first[i]; k < first[i + 1]; k++) {
            at[kids[k]] = cur;
            cur += f->v[kids[k]].idle_ns;
        }
        for (uint32_t k = first[i + 1]; k-- > first[i];) {
            const struct gt_fnode *c = &f->v[kids[k]];
            /* thinner than 1/GT_FLAME_MIN of the whole (a pixel of a
             * 1000-pixel graph): left out, with everything under it */
            if ((unsigned __int128)c->idle_ns * GT_FLAME_MIN >= root && c->idle_ns)
                todo[ntodo++] = kids[k];
        }
    }
    for (size_t i = 1; i < n; i++)
        hidden += f->v[i].idle_ns || f->v[i].samples;
    r->flame = out;
    r->nflame = nout;
    r->flame_hidden = hidden - (nout - 1);
    r->flame_text = f->text;
    f->text = NULL;
    out = NULL;
    rc = 0;
done:
    free(first);
    free(fill);
    free(kids);
    free(todo);
    free(at);
    free(out);
    return rc;
}

void gt_flame_free(struct gt_flame_b *f)
{
    free(f->v);
    free(f->text);
    gt_map_free(&f->child);
    memset(f, 0, sizeof(*f));
}
