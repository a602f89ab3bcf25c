/* gt_cupti_share.c: the program's own use of CUPTI's Activity API (the
 * PyTorch profiler's, a tool of its own) beside the tracer's.
 *
 * CUPTI has one set of buffer callbacks a process: the last registered
 * wins. Once the tracer holds it, the program's calls are answered here:
 * the kinds it enables that the tracer records anyway are not enabled
 * again, and its records are copied out of the tracer's buffers, as
 * CUPTI laid them out, into buffers from the program's own bufferRequested
 * and handed back through its own bufferCompleted. Kinds the tracer does
 * not record go to CUPTI, and all their records are the program's.
 *
 * "From when it enabled them": CUPTI records a call's work if the kind
 * was on when the call was made. For each work-making call the tracer
 * pushes its external id (gt_call.h); gt_cupti_share_note stores, under
 * that id, which kinds the program had on then, and the forwarding finds
 * it again through CUPTI's external-correlation record of the call. Work
 * of a call the tracer did not see is judged by its start time. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/gt_base.h"
#include "cupti/gt_cupti_app.h"
#include "cupti/gt_cupti_int.h"

/* The kinds the tracer records too, as bits of the program's mask. */
enum { GT_SB_EXT, GT_SB_CONC, GT_SB_KERNEL, GT_SB_MEMCPY, GT_SB_MEMSET, GT_SB_SYNC, GT_SB_OVERHEAD, GT_SB_DRIVER,
       GT_SB_RUNTIME };

static int gt_share_bit(uint32_t kind)
{
    switch (kind) {
    case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: return GT_SB_EXT;
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: return GT_SB_CONC;
    case CUPTI_ACTIVITY_KIND_KERNEL: return GT_SB_KERNEL;
    case CUPTI_ACTIVITY_KIND_MEMCPY: return GT_SB_MEMCPY;
    case CUPTI_ACTIVITY_KIND_MEMSET: return GT_SB_MEMSET;
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: return GT_SB_SYNC;
    case CUPTI_ACTIVITY_KIND_OVERHEAD: return GT_SB_OVERHEAD;
    case CUPTI_ACTIVITY_KIND_DRIVER: return GT_SB_DRIVER;
    case CUPTI_ACTIVITY_KIND_RUNTIME: return GT_SB_RUNTIME;
    default: return -1;
    }
}

/* Whether the tracer's kinds already make CUPTI record `kind`: the
 * program's kernel kind is served by the tracer's concurrent kernels
 * (records relabelled; kernels are not serialized, as kind KERNEL would). */
static int gt_share_covered(uint32_t kind)
{
    uint64_t t = atomic_load(&gt_cupti_tracer_kinds);
    if (kind == CUPTI_ACTIVITY_KIND_KERNEL)
        kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
    return kind < 64 && gt_share_bit(kind) >= 0 && ((t >> kind) & 1);
}

#define GT_SHARE_KINDS 64
#define GT_SHARE_SLOTS (1u << 16) /* calls in flight between a launch and CUPTI's records of it */
#define GT_SHARE_LOG 256

static pthread_mutex_t gt_share_lock = PTHREAD_MUTEX_INITIALIZER; /* the program's state */
static pthread_mutex_t gt_share_fwd = PTHREAD_MUTEX_INITIALIZER;  /* its buffer, the maps */
static CUpti_BuffersCallbackRequestFunc gt_app_req;
static CUpti_BuffersCallbackCompleteFunc gt_app_done;
static uint8_t gt_app_on[GT_SHARE_KINDS];
static _Atomic uint32_t gt_app_mask;    /* share bits the program has on */
static _Atomic int gt_share_active;     /* the tracer holds CUPTI and the program has callbacks */
static _Atomic int gt_share_forwarding; /* forwards in progress */
static _Atomic int gt_share_ended;      /* the process is ending: nothing more to the program */
static _Atomic int gt_app_ever_on;      /* the program has turned a kind on: records may be its */
static _Atomic int gt_app_ever_registered; /* 1: through to CUPTI, 2: while the tracer held it */
static _Atomic int gt_app_kinds_on;     /* how many kinds the program has on */
static _Atomic int gt_app_open;         /* the program has lent us a buffer (gt_app_buf) */
static uint32_t gt_app_period_ms;

/* The mask's changes in time, for work no noted call made. */
static struct {
    uint64_t t;
    uint32_t mask;
} gt_share_log[GT_SHARE_LOG];
static unsigned gt_share_nlog;

/* External id -> the mask when the call was made: one word a slot, a hash
 * of the id above the low 16 bits, the mask (15 bits) and a set bit below. */
static _Atomic(uint64_t) *gt_share_slots;
/* CUPTI correlation id -> our external id, from CUPTI's records. */
static uint32_t *gt_share_ctag;
static uint64_t *gt_share_cext;

/* The program's current buffer (under gt_share_fwd). */
static uint8_t *gt_app_buf;
static size_t gt_app_size, gt_app_used, gt_app_max, gt_app_nrec;
static uint64_t gt_app_last_ns;
static _Atomic(uint64_t) gt_app_records, gt_app_dropped, gt_app_dropped_unread;

struct gt_share_done {
    uint8_t *buf;
    size_t size, valid;
    struct gt_share_done *next;
};

static uint64_t gt_share_mix(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ull;
    return x ^ (x >> 33);
}

/* ---- the program's kinds (gt_share_lock held) ---- */

static void gt_share_set_locked(uint32_t kind, int on)
{
    if (kind >= GT_SHARE_KINDS)
        return;
    if (gt_app_on[kind] != (uint8_t)!!on)
        atomic_fetch_add(&gt_app_kinds_on, on ? 1 : -1);
    gt_app_on[kind] = (uint8_t)!!on;
    if (on)
        atomic_store(&gt_app_ever_on, 1);
    int bit = gt_share_bit(kind);
    if (bit < 0)
        return;
    uint32_t m = atomic_load(&gt_app_mask);
    m = on ? m | (1u << bit) : m & ~(1u << bit);
    atomic_store_explicit(&gt_app_mask, m, memory_order_release);
    unsigned i = gt_share_nlog++ % GT_SHARE_LOG;
    gt_share_log[i].t = gt_now_ns();
    gt_share_log[i].mask = m;
}

/* The program's mask at time t (the program's kinds have changed at most
 * GT_SHARE_LOG times since, else the oldest known). */
static uint32_t gt_share_mask_at(uint64_t t)
{
    pthread_mutex_lock(&gt_share_lock);
    uint32_t m = 0;
    unsigned n = gt_share_nlog, first = n > GT_SHARE_LOG ? n - GT_SHARE_LOG : 0;
    for (unsigned i = first; i < n; i++) {
        if (gt_share_log[i % GT_SHARE_LOG].t > t) {
            if (i == first && first)
                m = gt_share_log[i % GT_SHARE_LOG].mask;
            break;
        }
        m = gt_share_log[i % GT_SHARE_LOG].mask;
    }
    pthread_mutex_unlock(&gt_share_lock);
    return m;
}

static void gt_share_update_active(void)
{
    int on = atomic_load(&gt_cupti_holding) && gt_app_done;
    if (on && !gt_share_slots) {
        /* The program's first registration while the tracer holds CUPTI;
         * without the maps, records are judged by their times. */
        gt_share_ctag = calloc(GT_SHARE_SLOTS, sizeof(*gt_share_ctag));
        gt_share_cext = calloc(GT_SHARE_SLOTS, sizeof(*gt_share_cext));
        _Atomic(uint64_t) *slots = calloc(GT_SHARE_SLOTS, sizeof(*slots));
        if (!gt_share_ctag || !gt_share_cext) {
            free(gt_share_ctag);
            free(gt_share_cext);
            gt_share_ctag = NULL;
            gt_share_cext = NULL;
        }
        atomic_store_explicit(&gt_share_slots, slots, memory_order_release);
    }
    atomic_store(&gt_share_active, on);
}

/* A buffer from the program's bufferRequested, with room for `room` bytes
 * (a smaller one is the program's to keep: CUPTI drops the record). */
static int gt_share_request(size_t room)
{
    uint8_t *b = NULL;
    size_t size = 0, max = 0;
    CUpti_BuffersCallbackRequestFunc req = gt_app_req;
    if (req)
        req(&b, &size, &max);
    if (!b || size < room)
        return 0;
    gt_app_buf = b;
    gt_app_size = size;
    gt_app_max = max;
    gt_app_used = gt_app_nrec = 0;
    atomic_store(&gt_app_open, 1);
    return 1;
}

/* The program's first call with a kind of its on since its last buffer
 * went back: CUPTI asks it for a buffer as it writes the call's first
 * record, not when the GPU's records come in. A collector that flushes
 * only while it has a buffer lent (the PyTorch profiler's: "nothing in
 * flight, nothing to flush") must see one lent by the end of its window,
 * or it never flushes and gets none of its records. */
static void gt_share_open(void)
{
    if (atomic_load(&gt_share_ended))
        return;
    pthread_mutex_lock(&gt_share_fwd);
    if (!gt_app_buf && atomic_load(&gt_app_kinds_on) > 0)
        gt_share_request(sizeof(CUpti_Activity));
    pthread_mutex_unlock(&gt_share_fwd);
}

/* ---- on the program's threads, for each work-making call ---- */

void gt_cupti_share_note(uint64_t ext)
{
    if (!atomic_load_explicit(&gt_share_active, memory_order_relaxed))
        return;
    _Atomic(uint64_t) *slots = atomic_load_explicit(&gt_share_slots, memory_order_acquire);
    if (!slots)
        return;
    uint64_t h = gt_share_mix(ext);
    uint32_t m = atomic_load_explicit(&gt_app_mask, memory_order_acquire);
    atomic_store_explicit(&slots[(h >> 16) & (GT_SHARE_SLOTS - 1)], (h & ~0xffffull) | 0x8000u | (m & 0x7fff),
                          memory_order_relaxed);
    if (atomic_load_explicit(&gt_app_kinds_on, memory_order_relaxed) > 0 &&
        !atomic_load_explicit(&gt_app_open, memory_order_relaxed))
        gt_share_open();
}

/* ---- forwarding (gt_share_fwd held) ---- */

static void gt_share_learn(uint32_t corr, uint64_t ext)
{
    if (!gt_share_ctag)
        return;
    gt_share_ctag[corr & (GT_SHARE_SLOTS - 1)] = corr + 1;
    gt_share_cext[corr & (GT_SHARE_SLOTS - 1)] = ext;
}

/* The program's mask when the call with CUPTI correlation id `corr` was
 * made; `t`: the work's start, for a call the tracer did not note. */
static uint32_t gt_share_mask_for(uint32_t corr, uint64_t t)
{
    _Atomic(uint64_t) *slots = atomic_load_explicit(&gt_share_slots, memory_order_acquire);
    if (slots && gt_share_ctag && corr && gt_share_ctag[corr & (GT_SHARE_SLOTS - 1)] == corr + 1) {
        uint64_t h = gt_share_mix(gt_share_cext[corr & (GT_SHARE_SLOTS - 1)]);
        uint64_t w = atomic_load_explicit(&slots[(h >> 16) & (GT_SHARE_SLOTS - 1)], memory_order_relaxed);
        if ((w & 0x8000) && (w & ~0xffffull) == (h & ~0xffffull))
            return (uint32_t)(w & 0x7fff);
    }
    return t ? gt_share_mask_at(gt_cupti_clock_map(t)) : atomic_load(&gt_app_mask);
}

/* Which kind the program gets `rec` as (0: not its record). */
static uint32_t gt_share_judge(const CUpti_Activity *rec)
{
    uint32_t kind = (uint32_t)rec->kind;
    uint32_t m;
    switch (kind) {
    case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: {
        const CUpti_ActivityExternalCorrelation *x = (const void *)rec;
        if (x->externalKind == GT_EXT_KIND)
            return 0; /* ours */
        /* CUPTI writes one beside an API record only: the program gets it
         * where its own choices made API records (the tracer's choices
         * make some for it that it would not have had). Per function, the
         * program's choices are taken as a whole. */
        m = gt_share_mask_for(x->correlationId, 0);
        int api = (m >> GT_SB_DRIVER) & 1 || (m >> GT_SB_RUNTIME) & 1 || gt_cupti_api_app_any();
        return (m >> GT_SB_EXT) & 1 && api ? kind : 0;
    }
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
        const CUpti_ActivityKernel10 *k = (const void *)rec;
        m = gt_share_mask_for(k->correlationId, k->start);
        return (m >> GT_SB_CONC) & 1     ? CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL
               : (m >> GT_SB_KERNEL) & 1 ? CUPTI_ACTIVITY_KIND_KERNEL
                                         : 0;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY: {
        const CUpti_ActivityMemcpy6 *c = (const void *)rec;
        m = gt_share_mask_for(c->correlationId, c->start);
        return (m >> GT_SB_MEMCPY) & 1 ? kind : 0;
    }
    case CUPTI_ACTIVITY_KIND_MEMSET: {
        const CUpti_ActivityMemset4 *s = (const void *)rec;
        m = gt_share_mask_for(s->correlationId, s->start);
        return (m >> GT_SB_MEMSET) & 1 ? kind : 0;
    }
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: {
        const CUpti_ActivitySynchronization2 *y = (const void *)rec;
        m = gt_share_mask_for(y->correlationId, y->start);
        return (m >> GT_SB_SYNC) & 1 ? kind : 0;
    }
    case CUPTI_ACTIVITY_KIND_OVERHEAD: {
        const CUpti_ActivityOverhead3 *o = (const void *)rec;
        return (gt_share_mask_at(gt_cupti_clock_map(o->start)) >> GT_SB_OVERHEAD) & 1 ? kind : 0;
    }
    case CUPTI_ACTIVITY_KIND_DRIVER:
    case CUPTI_ACTIVITY_KIND_RUNTIME: {
        /* The tracer's API records (gt_cupti_api.c) are the program's
         * only where it has the kind on. */
        const CUpti_ActivityAPI *a = (const void *)rec;
        m = gt_share_mask_for(a->correlationId, a->start);
        return (m >> gt_share_bit(kind)) & 1 || gt_cupti_api_app_selected(kind, a->cbid) ? kind : 0;
    }
    default:
        /* A kind the tracer does not record: CUPTI made it for the program. */
        return kind;
    }
}

/* The program's current buffer, full or flushed, onto `done`. */
static void gt_share_retire(struct gt_share_done **done)
{
    if (!gt_app_buf)
        return;
    struct gt_share_done *d = malloc(sizeof(*d));
    if (d) {
        *d = (struct gt_share_done){gt_app_buf, gt_app_size, gt_app_used, *done};
        *done = d;
    }
    gt_app_buf = NULL;
    gt_app_size = gt_app_used = gt_app_nrec = 0;
    gt_app_last_ns = gt_now_ns();
    atomic_store(&gt_app_open, 0);
}

/* Copies one record of `n` bytes (its place in CUPTI's buffer, padding
 * included) into the program's buffer, as kind `kind`. */
static void gt_share_put(const CUpti_Activity *rec, size_t n, uint32_t kind, struct gt_share_done **done)
{
    size_t room = (n + 7) & ~(size_t)7;
    if (gt_app_buf && (gt_app_used + room > gt_app_size || (gt_app_max && gt_app_nrec >= gt_app_max)))
        gt_share_retire(done);
    if (!gt_app_buf && !gt_share_request(room)) {
        atomic_fetch_add(&gt_app_dropped, 1);
        atomic_fetch_add(&gt_app_dropped_unread, 1);
        return;
    }
    uint8_t *p = gt_app_buf + gt_app_used;
    memcpy(p, rec, n);
    memset(p + n, 0, room - n);
    ((CUpti_Activity *)(void *)p)->kind = (CUpti_ActivityKind)kind;
    gt_app_used += room;
    gt_app_nrec++;
    atomic_fetch_add(&gt_app_records, 1);
}

static void gt_share_deliver(struct gt_share_done *d)
{
    /* Oldest first: the list was built newest first. */
    struct gt_share_done *rev = NULL;
    while (d) {
        struct gt_share_done *next = d->next;
        d->next = rev;
        rev = d;
        d = next;
    }
    pthread_mutex_lock(&gt_share_lock);
    CUpti_BuffersCallbackCompleteFunc cb = gt_app_done;
    pthread_mutex_unlock(&gt_share_lock);
    while (rev) {
        struct gt_share_done *next = rev->next;
        if (cb)
            cb(NULL, 0, rev->buf, rev->size, rev->valid);
        free(rev);
        rev = next;
    }
}

void gt_cupti_share_forward(uint8_t *buf, size_t valid)
{
    /* A collector registered and not yet turned on (the PyTorch profiler's
     * before its first active step) costs no walk of the tracer's buffers. */
    if (!atomic_load(&gt_share_active) || !atomic_load(&gt_app_ever_on) || atomic_load(&gt_share_ended) || !valid ||
        !gt_cu.next_record)
        return;
    atomic_fetch_add(&gt_share_forwarding, 1);
    struct gt_share_done *done = NULL;
    pthread_mutex_lock(&gt_share_fwd);
    CUpti_Activity *rec = NULL;
    /* Our external ids first: an external-correlation record may follow
     * the work it names in the same buffer. */
    while (gt_cu.next_record(buf, valid, &rec) == CUPTI_SUCCESS) {
        if (rec->kind != CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION)
            continue;
        const CUpti_ActivityExternalCorrelation *x = (const void *)rec;
        if (x->externalKind == GT_EXT_KIND)
            gt_share_learn(x->correlationId, x->externalId);
    }
    rec = NULL;
    CUpti_Activity *next = NULL;
    int more = gt_cu.next_record(buf, valid, &rec) == CUPTI_SUCCESS;
    while (more) {
        next = rec;
        more = gt_cu.next_record(buf, valid, &next) == CUPTI_SUCCESS;
        size_t n = (size_t)((more ? (uint8_t *)next : buf + valid) - (uint8_t *)rec);
        uint32_t kind = gt_share_judge(rec);
        if (kind)
            gt_share_put(rec, n, kind, &done);
        rec = next;
    }
    if (gt_app_period_ms && gt_app_used && gt_now_ns() - gt_app_last_ns >= (uint64_t)gt_app_period_ms * 1000000u)
        gt_share_retire(&done);
    pthread_mutex_unlock(&gt_share_fwd);
    gt_share_deliver(done);
    atomic_fetch_sub(&gt_share_forwarding, 1);
}

int gt_cupti_share_foreign(uint8_t *buf, size_t size, size_t valid)
{
    pthread_mutex_lock(&gt_share_lock);
    CUpti_BuffersCallbackCompleteFunc cb = gt_app_done;
    pthread_mutex_unlock(&gt_share_lock);
    if (!cb)
        return 0;
    if (atomic_load(&gt_share_ended))
        return 1; /* the program's to free; not ours to lend */
    cb(NULL, 0, buf, size, valid);
    return 1;
}

int gt_cupti_share_wants(CUpti_ActivityKind k)
{
    pthread_mutex_lock(&gt_share_lock);
    int on = gt_app_done && (unsigned)k < GT_SHARE_KINDS &&
             (gt_app_on[k] || (k == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL && gt_app_on[CUPTI_ACTIVITY_KIND_KERNEL]));
    pthread_mutex_unlock(&gt_share_lock);
    return on;
}

void gt_cupti_share_take(void)
{
    pthread_mutex_lock(&gt_share_lock);
    int registered = gt_app_done != NULL;
    pthread_mutex_unlock(&gt_share_lock);
    /* What CUPTI holds in the program's buffers goes to it; a buffer of
     * its still on the way comes to us and is handed on
     * (gt_cupti_share_foreign). */
    if (registered)
        gt_cu.flush_all(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
}

void gt_cupti_share_kernels_served(void)
{
    pthread_mutex_lock(&gt_share_lock);
    int kernel = gt_app_on[CUPTI_ACTIVITY_KIND_KERNEL];
    pthread_mutex_unlock(&gt_share_lock);
    if (kernel)
        gt_cu.disable(CUPTI_ACTIVITY_KIND_KERNEL);
}

void gt_cupti_share_taken(void)
{
    pthread_mutex_lock(&gt_share_lock);
    gt_share_update_active();
    pthread_mutex_unlock(&gt_share_lock);
}

/* ---- the program's calls ---- */

#define GT_REAL(type, real, field) ((real) ? (type)(real) : gt_cu.field)

static int gt_holding(void)
{
    return atomic_load(&gt_cupti_holding);
}

CUptiResult gt_cupti_app_register(void *real, CUpti_BuffersCallbackRequestFunc req,
                                  CUpti_BuffersCallbackCompleteFunc done)
{
    if (!gt_holding()) {
        CUptiResult (*fn)(CUpti_BuffersCallbackRequestFunc, CUpti_BuffersCallbackCompleteFunc) =
            GT_REAL(CUptiResult(*)(CUpti_BuffersCallbackRequestFunc, CUpti_BuffersCallbackCompleteFunc), real,
                    register_callbacks);
        CUptiResult r = fn ? fn(req, done) : CUPTI_ERROR_NOT_INITIALIZED;
        if (r == CUPTI_SUCCESS) {
            pthread_mutex_lock(&gt_share_lock);
            gt_app_req = req;
            gt_app_done = done;
            if (!atomic_load(&gt_app_ever_registered))
                atomic_store(&gt_app_ever_registered, 1);
            pthread_mutex_unlock(&gt_share_lock);
        }
        return r;
    }
    if (!req || !done)
        return CUPTI_ERROR_INVALID_PARAMETER;
    pthread_mutex_lock(&gt_share_fwd); /* not while a buffer of the last callbacks fills */
    pthread_mutex_lock(&gt_share_lock);
    gt_app_req = req;
    gt_app_done = done;
    atomic_store(&gt_app_ever_registered, 2);
    gt_share_update_active();
    pthread_mutex_unlock(&gt_share_lock);
    pthread_mutex_unlock(&gt_share_fwd);
    return CUPTI_SUCCESS;
}

CUptiResult gt_cupti_app_enable(void *real, CUpti_ActivityKind kind, int on)
{
    int holding = gt_holding();
    CUptiResult r = CUPTI_SUCCESS;
    if (!holding || !gt_share_covered((uint32_t)kind)) {
        CUptiResult (*fn)(CUpti_ActivityKind) =
            on ? GT_REAL(CUptiResult(*)(CUpti_ActivityKind), holding ? NULL : real, enable)
               : GT_REAL(CUptiResult(*)(CUpti_ActivityKind), holding ? NULL : real, disable);
        r = fn ? fn(kind) : CUPTI_ERROR_NOT_INITIALIZED;
    }
    if (r == CUPTI_SUCCESS) {
        pthread_mutex_lock(&gt_share_lock);
        gt_share_set_locked((uint32_t)kind, on);
        pthread_mutex_unlock(&gt_share_lock);
        if (holding && !on && (kind == CUPTI_ACTIVITY_KIND_DRIVER || kind == CUPTI_ACTIVITY_KIND_RUNTIME))
            gt_cupti_api_records_reselect(kind);
    }
    return r;
}

/* While the tracer holds CUPTI, a context's kind is taken as the whole
 * process's (the tracer's records are not told apart by context). */
CUptiResult gt_cupti_app_enable_context(void *real, CUcontext ctx, CUpti_ActivityKind kind, int on)
{
    if (!gt_holding()) {
        CUptiResult (*fn)(CUcontext, CUpti_ActivityKind) = (CUptiResult(*)(CUcontext, CUpti_ActivityKind))real;
        CUptiResult r = fn ? fn(ctx, kind) : CUPTI_ERROR_NOT_INITIALIZED;
        if (r == CUPTI_SUCCESS) {
            pthread_mutex_lock(&gt_share_lock);
            gt_share_set_locked((uint32_t)kind, on);
            pthread_mutex_unlock(&gt_share_lock);
        }
        return r;
    }
    return gt_cupti_app_enable(NULL, kind, on);
}

/* Everything CUPTI holds, then the program's partial buffer, to it (an
 * empty one too when `all`: the program detaches). */
static void gt_share_flush(uint32_t flag, int all)
{
    gt_cu.flush_all(flag);
    /* A buffer CUPTI's own thread was handing back as the flush ran may
     * still be on its way through us: a bounded wait for it. (Not for the
     * buffers lent to CUPTI: launches on other threads keep one lent.) */
    for (int i = 0; i < 100 && atomic_load(&gt_share_forwarding); i++)
        usleep(1000);
    struct gt_share_done *done = NULL;
    pthread_mutex_lock(&gt_share_fwd);
    if (gt_app_used || all)
        gt_share_retire(&done);
    pthread_mutex_unlock(&gt_share_fwd);
    gt_share_deliver(done);
}

CUptiResult gt_cupti_app_flush_all(void *real, uint32_t flag)
{
    if (!gt_holding()) {
        CUptiResult (*fn)(uint32_t) = GT_REAL(CUptiResult(*)(uint32_t), real, flush_all);
        return fn ? fn(flag) : CUPTI_ERROR_NOT_INITIALIZED;
    }
    gt_share_flush(flag, 0);
    return CUPTI_SUCCESS;
}

CUptiResult gt_cupti_app_flush(void *real, CUcontext ctx, uint32_t stream, uint32_t flag)
{
    if (!gt_holding()) {
        CUptiResult (*fn)(CUcontext, uint32_t, uint32_t) = (CUptiResult(*)(CUcontext, uint32_t, uint32_t))real;
        return fn ? fn(ctx, stream, flag) : CUPTI_ERROR_NOT_INITIALIZED;
    }
    gt_share_flush(flag, 0);
    return CUPTI_SUCCESS;
}

/* The program's period: its partial buffer is handed back at least that
 * often (the tracer's own period, 100 ms, paces the checks). */
CUptiResult gt_cupti_app_flush_period(void *real, uint32_t ms)
{
    if (!gt_holding()) {
        CUptiResult (*fn)(uint32_t) = GT_REAL(CUptiResult(*)(uint32_t), real, flush_period);
        return fn ? fn(ms) : CUPTI_ERROR_NOT_INITIALIZED;
    }
    pthread_mutex_lock(&gt_share_fwd);
    gt_app_period_ms = ms;
    pthread_mutex_unlock(&gt_share_fwd);
    return CUPTI_SUCCESS;
}

/* The program's own count: records it lost for want of a buffer from it
 * (the tracer's drops are the tracer's: meta.cupti_dropped_records). */
CUptiResult gt_cupti_app_dropped(void *real, CUcontext ctx, uint32_t stream, size_t *dropped)
{
    if (!gt_holding()) {
        CUptiResult (*fn)(CUcontext, uint32_t, size_t *) =
            GT_REAL(CUptiResult(*)(CUcontext, uint32_t, size_t *), real, dropped);
        return fn ? fn(ctx, stream, dropped) : CUPTI_ERROR_NOT_INITIALIZED;
    }
    if (!dropped)
        return CUPTI_ERROR_INVALID_PARAMETER;
    *dropped = (size_t)atomic_exchange(&gt_app_dropped_unread, 0);
    return CUPTI_SUCCESS;
}

/* The program detaches from CUPTI: its records so far handed to it, its
 * kinds off and its callbacks forgotten, as CUPTI's own finalize does; the
 * tracer's CUPTI runs on. */
CUptiResult gt_cupti_app_finalize(void *real)
{
    if (!gt_holding()) {
        CUptiResult (*fn)(void) = (CUptiResult(*)(void))real;
        CUptiResult r = fn ? fn() : CUPTI_ERROR_NOT_INITIALIZED;
        if (r == CUPTI_SUCCESS) {
            pthread_mutex_lock(&gt_share_lock);
            for (uint32_t k = 0; k < GT_SHARE_KINDS; k++)
                if (gt_app_on[k])
                    gt_share_set_locked(k, 0);
            gt_app_req = NULL;
            gt_app_done = NULL;
            pthread_mutex_unlock(&gt_share_lock);
        }
        return r;
    }
    gt_share_flush(0, 1);
    pthread_mutex_lock(&gt_share_fwd);
    pthread_mutex_lock(&gt_share_lock);
    for (uint32_t k = 0; k < GT_SHARE_KINDS; k++) {
        if (!gt_app_on[k])
            continue;
        if (!gt_share_covered(k))
            gt_cu.disable((CUpti_ActivityKind)k);
        gt_share_set_locked(k, 0);
    }
    gt_app_req = NULL;
    gt_app_done = NULL;
    gt_app_period_ms = 0;
    gt_share_update_active();
    pthread_mutex_unlock(&gt_share_lock);
    pthread_mutex_unlock(&gt_share_fwd);
    return CUPTI_SUCCESS;
}

const char *gt_cupti_app_mode(void)
{
    int r = atomic_load(&gt_app_ever_registered);
    return r == 2 || (r && atomic_load(&gt_cupti_holding)) ? "shared" : r ? "direct" : NULL;
}

uint64_t gt_cupti_app_records(void)
{
    return atomic_load(&gt_app_records);
}

uint64_t gt_cupti_app_records_dropped(void)
{
    return atomic_load(&gt_app_dropped);
}

void gt_cupti_share_end(void)
{
    atomic_store(&gt_share_ended, 1);
    /* a forward under way finishes first */
    for (int i = 0; i < 100 && atomic_load(&gt_share_forwarding); i++)
        usleep(1000);
}

void gt_cupti_share_after_fork_child(void)
{
    /* Another thread may have held either lock at the fork. The program's
     * partial buffer stays the parent's to hand back. */
    pthread_mutex_t fresh = PTHREAD_MUTEX_INITIALIZER;
    gt_share_lock = fresh;
    gt_share_fwd = fresh;
    atomic_store(&gt_share_forwarding, 0);
    gt_app_buf = NULL;
    gt_app_size = gt_app_used = gt_app_nrec = 0;
    atomic_store(&gt_app_open, 0);
}
