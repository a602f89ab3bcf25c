/* gt_idtab.h: a lock-free, append-only table that turns each distinct
 * array of 64-bit words (a native stack, a Python stack) into a small id.
 * Any thread may intern; the writer reads records by id. */
#ifndef GT_IDTAB_H
#define GT_IDTAB_H

#include <stdatomic.h>
#include <stdint.h>

struct gt_idtab_rec {
    uint64_t hash;
    uint32_t n;
    uint32_t offset; /* into the arena */
};

struct gt_idtab {
    _Atomic(uint32_t) *slots;
    struct gt_idtab_rec *recs;
    uint64_t *arena;
    uint32_t nslots, max_recs, arena_words;
    _Atomic(uint32_t) next_id;
    _Atomic(uint32_t) arena_used;
    _Atomic(uint64_t) drops;
};

/* Maps the table's memory (reserved, touched only as used). 0, or -1. */
int gt_idtab_init(struct gt_idtab *t, uint32_t nslots, uint32_t arena_words);
/* The id of words[0..n), added if new; 0 when the table is full (counted). */
uint32_t gt_idtab_intern(struct gt_idtab *t, const uint64_t *words, uint32_t n);
/* The words of an id; returns their count (0 for an unknown id). */
uint32_t gt_idtab_get(const struct gt_idtab *t, uint32_t id, const uint64_t **words);
uint32_t gt_idtab_count(const struct gt_idtab *t);

#endif
