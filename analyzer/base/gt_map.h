/* gt_map.h: a small hash map from a 64-bit key to a 64-bit value, for the
 * analyses' tables keyed by a site, a kind, a thread or a name pointer. A
 * value of 0 marks an empty slot, so a new key's value reads 0 until set. */
#ifndef GT_MAP_H
#define GT_MAP_H

#include <stddef.h>
#include <stdint.h>

struct gt_map {
    uint64_t *key;
    int64_t *val;
    size_t slots, n;    /* n: keys whose value is not 0 */
};

/* The value of `key`, to read or set (0 for a key not seen); NULL when out
 * of memory. Set a new key's value to something other than 0 before the
 * next call, or the slot stays empty. */
int64_t *gt_map_at(struct gt_map *m, uint64_t key);
/* The value of `key`, 0 when absent; adds nothing (for lookups that
 * mostly miss, which gt_map_at would count toward growing). */
int64_t gt_map_get(const struct gt_map *m, uint64_t key);
void gt_map_free(struct gt_map *m);
/* A hash of a string, for tables keyed by text (FNV-1a). */
uint64_t gt_map_hash_text(const char *s);

#endif
