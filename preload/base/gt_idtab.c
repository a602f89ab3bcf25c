/* gt_idtab.c: records are written in full before their slot is published
 * with a release CAS, so any thread (and the writer) that sees an id sees
 * its words. Losing a CAS race wastes one record id; nothing else. */
#include <string.h>
#include <sys/mman.h>

#include "base/gt_idtab.h"

static void *gt_idtab_map(size_t bytes)
{
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

int gt_idtab_init(struct gt_idtab *t, uint32_t nslots, uint32_t arena_words)
{
    if (t->slots)
        return 0;
    t->nslots = nslots;
    t->max_recs = nslots / 2;
    t->arena_words = arena_words;
    t->slots = gt_idtab_map(sizeof(*t->slots) * nslots);
    t->recs = gt_idtab_map(sizeof(*t->recs) * (t->max_recs + 1));
    t->arena = gt_idtab_map(sizeof(*t->arena) * arena_words);
    if (!t->slots || !t->recs || !t->arena) {
        t->slots = NULL;
        return -1;
    }
    return 0;
}

static uint64_t gt_idtab_hash(const uint64_t *w, uint32_t n)
{
    uint64_t h = 0xcbf29ce484222325ull ^ n;
    for (uint32_t i = 0; i < n; i++) {
        h ^= w[i];
        h *= 0x100000001b3ull;
        h ^= h >> 29;
    }
    return h ? h : 1;
}

static int gt_idtab_same(const struct gt_idtab *t, const struct gt_idtab_rec *r, uint64_t h, const uint64_t *w,
                         uint32_t n)
{
    return r->hash == h && r->n == n && memcmp(t->arena + r->offset, w, n * sizeof(*w)) == 0;
}

static uint32_t gt_idtab_new(struct gt_idtab *t, uint64_t h, const uint64_t *w, uint32_t n)
{
    uint32_t off = atomic_fetch_add_explicit(&t->arena_used, n, memory_order_relaxed);
    uint32_t id = atomic_fetch_add_explicit(&t->next_id, 1, memory_order_relaxed) + 1;
    if (id > t->max_recs || off + n > t->arena_words || off + n < off)
        return 0;
    memcpy(t->arena + off, w, n * sizeof(*w));
    t->recs[id].hash = h;
    t->recs[id].n = n;
    t->recs[id].offset = off;
    return id;
}

uint32_t gt_idtab_intern(struct gt_idtab *t, const uint64_t *w, uint32_t n)
{
    if (!t->slots)
        return 0;
    uint64_t h = gt_idtab_hash(w, n);
    uint32_t mask = t->nslots - 1, i = (uint32_t)h & mask, mine = 0;
    for (uint32_t probe = 0; probe < t->nslots; probe++, i = (i + 1) & mask) {
        uint32_t id = atomic_load_explicit(&t->slots[i], memory_order_acquire);
        if (id == 0) {
            if (!mine)
                mine = gt_idtab_new(t, h, w, n);
            if (!mine)
                break;
            if (atomic_compare_exchange_strong_explicit(&t->slots[i], &id, mine, memory_order_acq_rel,
                                                        memory_order_acquire))
                return mine;
            /* Someone published here first: id now holds theirs. */
        }
        if (gt_idtab_same(t, &t->recs[id], h, w, n))
            return id;
    }
    atomic_fetch_add_explicit(&t->drops, 1, memory_order_relaxed);
    return 0;
}

uint32_t gt_idtab_get(const struct gt_idtab *t, uint32_t id, const uint64_t **w)
{
    if (id == 0 || id > t->max_recs || !t->recs)
        return 0;
    *w = t->arena + t->recs[id].offset;
    return t->recs[id].n;
}

uint32_t gt_idtab_count(const struct gt_idtab *t)
{
    uint32_t n = atomic_load(&t->next_id);
    return n > t->max_recs ? t->max_recs : n;
}
