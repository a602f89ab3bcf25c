/* gt_ops.c: the operations array and its slots. */
#include <stdlib.h>
#include <string.h>

#include "analysis/gt_ops.h"

void gt_ops_free(struct gt_ops *o)
{
    free(o->v);
    free(o->long_dur);
    free(o->big_slack);
    free(o->slot_device);
    free(o->slot_stream);
    free(o->slot_key);
    free(o->slot_idx);
    memset(o, 0, sizeof(*o));
}

static int gt_grow(void **p, size_t *cap, size_t need, size_t size)
{
    if (need <= *cap)
        return 0;
    size_t c = *cap ? *cap + *cap / 2 : 4096;
    if (c < need)
        c = need;
    void *n = realloc(*p, c * size);
    if (!n)
        return -1;
    *p = n;
    *cap = c;
    return 0;
}

static uint64_t gt_slot_hash(uint64_t key, size_t cap)
{
    return (key * 0x9E3779B97F4A7C15ull >> 17) & (cap - 1);
}

static long gt_slot_of(struct gt_ops *o, int64_t device, int64_t stream)
{
    if (o->last_slot && o->slot_device[o->last_slot - 1] == device && o->slot_stream[o->last_slot - 1] == stream)
        return (long)o->last_slot - 1;
    uint64_t key = ((uint64_t)device << 32) ^ (uint64_t)stream;
    if ((o->nslots + 1) * 2 > o->slot_cap) {
        size_t cap = o->slot_cap ? o->slot_cap * 2 : 64;
        uint64_t *k = calloc(cap, sizeof(*k));
        uint32_t *x = calloc(cap, sizeof(*x));
        if (!k || !x) {
            free(k);
            free(x);
            return -1;
        }
        for (size_t i = 0; i < o->slot_cap; i++) {
            if (!o->slot_idx[i])
                continue;
            size_t j = gt_slot_hash(o->slot_key[i], cap);
            while (x[j])
                j = (j + 1) & (cap - 1);
            k[j] = o->slot_key[i];
            x[j] = o->slot_idx[i];
        }
        free(o->slot_key);
        free(o->slot_idx);
        o->slot_key = k;
        o->slot_idx = x;
        o->slot_cap = cap;
    }
    size_t j = gt_slot_hash(key, o->slot_cap);
    for (; o->slot_idx[j]; j = (j + 1) & (o->slot_cap - 1)) {
        uint32_t s = o->slot_idx[j] - 1;
        if (o->slot_device[s] == device && o->slot_stream[s] == stream) {
            o->last_slot = s + 1;
            return s;
        }
    }
    if (o->nslots >= 0xffff)
        return -1;
    size_t cap1 = o->capslots, cap2 = o->capslots;
    if (gt_grow((void **)&o->slot_device, &cap1, o->nslots + 1, sizeof(int64_t)) < 0 ||
        gt_grow((void **)&o->slot_stream, &cap2, o->nslots + 1, sizeof(int64_t)) < 0)
        return -1;
    o->capslots = cap1 < cap2 ? cap1 : cap2;
    o->slot_device[o->nslots] = device;
    o->slot_stream[o->nslots] = stream;
    o->slot_key[j] = key;
    o->slot_idx[j] = (uint32_t)++o->nslots;
    o->last_slot = o->nslots;
    return (long)o->nslots - 1;
}

long gt_ops_add(struct gt_ops *o, int kind, int64_t device, int64_t stream, uint64_t start, uint64_t end)
{
    long slot = gt_slot_of(o, device, stream);
    if (slot < 0 || gt_grow((void **)&o->v, &o->cap, o->n + 1, sizeof(*o->v)) < 0)
        return -1;
    struct gt_op *x = &o->v[o->n];
    memset(x, 0, sizeof(*x));
    x->start = start;
    uint64_t dur = end > start ? end - start : 0;
    if (dur > UINT32_MAX) {
        if (gt_grow((void **)&o->long_dur, &o->caplong, o->nlong + 1, sizeof(*o->long_dur)) < 0 ||
            o->nlong >= UINT32_MAX)
            return -1;
        o->long_dur[o->nlong] = dur;
        x->dur = (uint32_t)o->nlong++;
        x->flags |= GT_OPF_LONG;
    } else {
        x->dur = (uint32_t)dur;
    }
    x->slot = (uint16_t)slot;
    x->kind = (uint8_t)kind;
    x->api = GT_OP_NO_API;
    return (long)o->n++;
}

int gt_op_set_call_end(struct gt_ops *o, struct gt_op *x, uint64_t call_end)
{
    int64_t slack = (int64_t)(x->start - call_end);
    x->flags |= GT_OPF_LAUNCH;
    x->flags &= (uint8_t)~GT_OPF_BIG_SLACK;
    if (slack >= INT32_MIN && slack <= INT32_MAX) {
        x->slack = (int32_t)slack;
        return 0;
    }
    if (gt_grow((void **)&o->big_slack, &o->capbig, o->nbig + 1, sizeof(*o->big_slack)) < 0 ||
        o->nbig >= INT32_MAX)
        return -1;
    o->big_slack[o->nbig] = slack;
    x->slack = (int32_t)o->nbig++;
    x->flags |= GT_OPF_BIG_SLACK;
    return 0;
}
