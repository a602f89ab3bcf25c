/* gt_map.c: open addressing, linear probing, doubled at half full. */
#include <stdlib.h>
#include <string.h>

#include "base/gt_map.h"

static size_t gt_map_home(uint64_t key, size_t slots)
{
    return (size_t)(key * 0x9E3779B97F4A7C15ull >> 20) & (slots - 1);
}

static int gt_map_grow(struct gt_map *m)
{
    size_t slots = m->slots ? m->slots * 2 : 64;
    uint64_t *k = calloc(slots, sizeof(*k));
    int64_t *v = calloc(slots, sizeof(*v));
    if (!k || !v) {
        free(k);
        free(v);
        return -1;
    }
    size_t n = 0;
    for (size_t i = 0; i < m->slots; i++) {
        if (!m->val[i])
            continue;
        size_t j = gt_map_home(m->key[i], slots);
        while (v[j])
            j = (j + 1) & (slots - 1);
        k[j] = m->key[i];
        v[j] = m->val[i];
        n++;
    }
    free(m->key);
    free(m->val);
    m->key = k;
    m->val = v;
    m->slots = slots;
    m->n = n;
    return 0;
}

int64_t *gt_map_at(struct gt_map *m, uint64_t key)
{
    if ((m->n + 1) * 2 > m->slots && gt_map_grow(m) < 0)
        return NULL;
    size_t j = gt_map_home(key, m->slots);
    while (m->val[j] && m->key[j] != key)
        j = (j + 1) & (m->slots - 1);
    if (!m->val[j]) {
        m->key[j] = key;
        m->n++; /* counted as taken: the caller sets it */
    }
    return &m->val[j];
}

int64_t gt_map_get(const struct gt_map *m, uint64_t key)
{
    if (!m->slots)
        return 0;
    size_t j = gt_map_home(key, m->slots);
    while (m->val[j] && m->key[j] != key)
        j = (j + 1) & (m->slots - 1);
    return m->val[j];
}

uint64_t gt_map_hash_text(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

void gt_map_free(struct gt_map *m)
{
    free(m->key);
    free(m->val);
    memset(m, 0, sizeof(*m));
}
