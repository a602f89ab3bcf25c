/* gt_nvtx.c: the NVTX injection library. NVTX's code, compiled into the
 * program from NVIDIA's headers, loads the library NVTX_INJECTION64_PATH
 * names on its first NVTX call and calls InitializeInjectionNvtx2 with its
 * export table; we fill the function table slots we support and NVTX sets
 * the rest to no-ops. From then on each NVTX call of the program comes here
 * on the program's thread: one event in the thread's ring, as a CUDA call
 * leaves, with its strings interned lock-free (bounded; cut and counted).
 *
 * Ranges' depth and parent are worked out by the writer, which sees each
 * thread's events in order; the depth counted here only answers NVTX's
 * return value (the level of the range pushed or popped). */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

/* Declarations and the injection's types (nvtxDetail/nvtxTypes.h, which
 * nvToolsExt.h includes), without NVTX's own implementation. */
#define NVTX_NO_IMPL
#include <nvtx3/nvToolsExt.h>

#include "base/gt_base.h"
#include "hot/gt_steps.h"
#include "hot/gt_crange.h"
#include "base/gt_idtab.h"
#include "hot/gt_call.h"
#include "hot/gt_nvtx.h"
#include "hot/gt_python.h"
#include "hot/gt_ring.h"
#include "hot/gt_stacks.h"

/* ---- strings ---- */

/* Room for 131072 distinct strings of up to GT_NVTX_STR_MAX bytes; memory
 * is reserved, and touched only as strings arrive. */
#define GT_NVTX_SLOTS (1u << 18)
#define GT_NVTX_ARENA_WORDS (1u << 22)
#define GT_NVTX_WORDS (1 + GT_NVTX_STR_MAX / 8)

static struct gt_idtab gt_nvtx_strs;
static pthread_once_t gt_nvtx_once = PTHREAD_ONCE_INIT;
static _Atomic(uint64_t) gt_nvtx_cut;

static void gt_nvtx_table_init(void)
{
    gt_idtab_init(&gt_nvtx_strs, GT_NVTX_SLOTS, GT_NVTX_ARENA_WORDS);
}

/* Words: the byte count, then the bytes, zero-padded to a whole word. */
static uint32_t gt_nvtx_intern_bytes(uint64_t *w, size_t n)
{
    w[0] = n;
    return gt_idtab_intern(&gt_nvtx_strs, w, (uint32_t)(1 + (n + 7) / 8));
}

static uint32_t gt_nvtx_intern_a(const char *s)
{
    if (!s)
        return 0;
    uint64_t w[GT_NVTX_WORDS + 1];
    size_t n = strnlen(s, GT_NVTX_STR_MAX + 1);
    if (n > GT_NVTX_STR_MAX) {
        n = GT_NVTX_STR_MAX;
        atomic_fetch_add_explicit(&gt_nvtx_cut, 1, memory_order_relaxed);
    }
    w[1 + n / 8] = 0;
    memcpy(w + 1, s, n);
    return gt_nvtx_intern_bytes(w, n);
}

/* wchar_t is UTF-32 here; each character becomes its UTF-8 bytes (U+FFFD
 * for a value that is no character). */
static uint32_t gt_nvtx_intern_w(const wchar_t *s)
{
    if (!s)
        return 0;
    uint64_t w[GT_NVTX_WORDS + 1];
    unsigned char *b = (unsigned char *)(w + 1);
    size_t n = 0;
    for (; *s; s++) {
        uint32_t c = (uint32_t)*s;
        if (c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF))
            c = 0xFFFD;
        size_t len = c < 0x80 ? 1 : c < 0x800 ? 2 : c < 0x10000 ? 3 : 4;
        if (n + len > GT_NVTX_STR_MAX) {
            atomic_fetch_add_explicit(&gt_nvtx_cut, 1, memory_order_relaxed);
            break;
        }
        if (len == 1) {
            b[n++] = (unsigned char)c;
        } else if (len == 2) {
            b[n++] = (unsigned char)(0xC0 | (c >> 6));
            b[n++] = (unsigned char)(0x80 | (c & 0x3F));
        } else if (len == 3) {
            b[n++] = (unsigned char)(0xE0 | (c >> 12));
            b[n++] = (unsigned char)(0x80 | ((c >> 6) & 0x3F));
            b[n++] = (unsigned char)(0x80 | (c & 0x3F));
        } else {
            b[n++] = (unsigned char)(0xF0 | (c >> 18));
            b[n++] = (unsigned char)(0x80 | ((c >> 12) & 0x3F));
            b[n++] = (unsigned char)(0x80 | ((c >> 6) & 0x3F));
            b[n++] = (unsigned char)(0x80 | (c & 0x3F));
        }
    }
    memset(b + n, 0, (8 - (n & 7)) & 7);
    return gt_nvtx_intern_bytes(w, n);
}

/* A registered string's handle is its id; anything else reads as none. */
static uint32_t gt_nvtx_handle_id(const void *h)
{
    uintptr_t id = (uintptr_t)h;
    return id && id <= gt_idtab_count(&gt_nvtx_strs) ? (uint32_t)id : 0;
}

int gt_nvtx_string(uint32_t id, const char **bytes)
{
    const uint64_t *w;
    uint32_t n = gt_idtab_get(&gt_nvtx_strs, id, &w);
    if (!n || w[0] > (uint64_t)(n - 1) * 8)
        return -1;
    *bytes = (const char *)(w + 1);
    return (int)w[0];
}

uint64_t gt_nvtx_truncated(void)
{
    return atomic_load(&gt_nvtx_cut);
}

uint64_t gt_nvtx_strings_dropped(void)
{
    return gt_nvtx_strs.slots ? atomic_load(&gt_nvtx_strs.drops) : 0;
}

/* ---- the thread's push depth, per domain (NVTX's return values) ---- */

#define GT_NVTX_DEPTH_DOMAINS 8
struct gt_nvtx_depth {
    uint32_t domain;
    int32_t depth;
};
static GT_TLS struct gt_nvtx_depth gt_tls_depth[GT_NVTX_DEPTH_DOMAINS];
static GT_TLS int gt_tls_depth_used;

/* The counter of a domain on this thread; NULL past the few tracked. */
static int32_t *gt_nvtx_depth_of(uint32_t domain)
{
    for (int i = 0; i < gt_tls_depth_used; i++)
        if (gt_tls_depth[i].domain == domain)
            return &gt_tls_depth[i].depth;
    if (gt_tls_depth_used == GT_NVTX_DEPTH_DOMAINS)
        return NULL;
    struct gt_nvtx_depth *d = &gt_tls_depth[gt_tls_depth_used++];
    d->domain = domain;
    d->depth = 0;
    return &d->depth;
}

/* ---- recording ---- */

static _Atomic(uint64_t) gt_nvtx_next_range;

/* The call guard of gt_call.h, for NVTX: the first NVTX call starts the
 * session as a first CUDA call does, so a range opened before any CUDA
 * work is recorded. */
static inline int gt_nvtx_enter(int *saved_errno)
{
    if (gt_tls_busy)
        return 0;
    int st = atomic_load_explicit(&gt_state, memory_order_acquire);
    if (st >= GT_STATE_DISABLED)
        return 0;
    *saved_errno = errno;
    gt_tls_busy = 1;
    if (__builtin_expect(st == GT_STATE_IDLE, 0)) {
        gt_call_starter();
        if (!gt_state_records(atomic_load_explicit(&gt_state, memory_order_relaxed))) {
            gt_tls_busy = 0;
            errno = *saved_errno;
            return 0;
        }
    }
    return 1;
}

static inline void gt_nvtx_leave(int saved_errno)
{
    gt_tls_busy = 0;
    errno = saved_errno;
}

static inline void gt_nvtx_init_event(struct gt_event *e, int kind, uint32_t domain)
{
    e->start_ns = e->end_ns = gt_now_ns();
    e->stream = 0;
    e->corr = 0;
    e->api = GT_API_NVTX;
    e->result = 0;
    e->stack_id = 0;
    e->pystack_id = 0;
    e->has_stream = 0;
    e->captured = 0;
    e->u.nvtx.id = 0;
    e->u.nvtx.payload = 0;
    e->u.nvtx.name = 0;
    e->u.nvtx.domain = domain;
    e->u.nvtx.category = 0;
    e->u.nvtx.kind = (uint8_t)kind;
    e->u.nvtx.payload_type = 0;
}

/* A range's start and a mark carry the stack they were made from. */
static inline void gt_nvtx_push_event(struct gt_event *e, int with_stack)
{
    if (with_stack) {
        e->stack_id = gt_stack_capture();
        e->pystack_id = gt_python_capture();
    }
    if (gt_state_records(atomic_load_explicit(&gt_state, memory_order_relaxed)))
        gt_ring_push(e);
}

/* What an attributes structure says: the fields its size covers. */
static void gt_nvtx_attr(struct gt_event *e, const nvtxEventAttributes_t *a)
{
    if (!a)
        return;
    size_t size = a->size;
    if (size >= offsetof(nvtxEventAttributes_t, colorType))
        e->u.nvtx.category = a->category;
    if (size >= offsetof(nvtxEventAttributes_t, messageType) && a->payloadType >= NVTX_PAYLOAD_TYPE_UNSIGNED_INT64 &&
        a->payloadType <= NVTX_PAYLOAD_TYPE_FLOAT) {
        e->u.nvtx.payload_type = (uint8_t)a->payloadType;
        switch (a->payloadType) {
        case NVTX_PAYLOAD_TYPE_UNSIGNED_INT32:
        case NVTX_PAYLOAD_TYPE_INT32:
        case NVTX_PAYLOAD_TYPE_FLOAT: {
            uint32_t v;
            memcpy(&v, &a->payload, sizeof(v));
            e->u.nvtx.payload = v;
            break;
        }
        default:
            memcpy(&e->u.nvtx.payload, &a->payload, sizeof(e->u.nvtx.payload));
        }
    }
    if (size < sizeof(nvtxEventAttributes_t))
        return;
    switch (a->messageType) {
    case NVTX_MESSAGE_TYPE_ASCII:
        e->u.nvtx.name = gt_nvtx_intern_a(a->message.ascii);
        break;
    case NVTX_MESSAGE_TYPE_UNICODE:
        e->u.nvtx.name = gt_nvtx_intern_w(a->message.unicode);
        break;
    case NVTX_MESSAGE_TYPE_REGISTERED:
        e->u.nvtx.name = gt_nvtx_handle_id(a->message.registered);
        break;
    default:
        break;
    }
}

static uint32_t gt_nvtx_domain_id(nvtxDomainHandle_t d)
{
    return gt_nvtx_handle_id(d);
}

/* The ASCII name a range was given, for the step watcher. */
static const char *gt_nvtx_ascii(const nvtxEventAttributes_t *a, const char *ms)
{
    if (ms)
        return ms;
    if (a && a->size >= sizeof(nvtxEventAttributes_t) && a->messageType == NVTX_MESSAGE_TYPE_ASCII)
        return a->message.ascii;
    return NULL;
}

/* The name a capture range is matched on: ASCII, or a registered string
 * (as nsys matches them); wide names are not matched. */
static const char *gt_nvtx_match_name(const nvtxEventAttributes_t *a, const char *ms, size_t *len)
{
    const char *s = gt_nvtx_ascii(a, ms);
    if (s) {
        *len = strnlen(s, 256);
        return s;
    }
    if (a && a->size >= sizeof(nvtxEventAttributes_t) && a->messageType == NVTX_MESSAGE_TYPE_REGISTERED) {
        int n = gt_nvtx_string(gt_nvtx_handle_id(a->message.registered), &s);
        if (n >= 0) {
            *len = (size_t)n;
            return s;
        }
    }
    return NULL;
}

/* Before the watchers look at a push or start: the first NVTX call of a
 * process starts its session (which configures them), so a capture range
 * that is the program's first NVTX call is seen. */
static inline void gt_nvtx_wake(void)
{
    if (__builtin_expect(atomic_load_explicit(&gt_state, memory_order_relaxed) == GT_STATE_IDLE, 0) &&
        !gt_tls_busy) {
        int se = errno;
        gt_tls_busy = 1;
        gt_call_starter();
        gt_tls_busy = 0;
        errno = se;
    }
}

/* Push and start: the event, made from attributes or a message. */
static int gt_nvtx_push(uint32_t domain, const nvtxEventAttributes_t *a, const char *ms, const wchar_t *mw)
{
    int se;
    gt_nvtx_wake();
    if (atomic_load_explicit(&gt_steps_on, memory_order_relaxed) && !gt_tls_busy)
        gt_steps_push(gt_nvtx_ascii(a, ms));
    /* A capture range opens its window before its own push is recorded. */
    if (atomic_load_explicit(&gt_crange_nvtx_on, memory_order_relaxed) && !gt_tls_busy) {
        size_t len = 0;
        const char *name = gt_nvtx_match_name(a, ms, &len);
        gt_crange_push(domain, name, len);
    }
    if (!gt_nvtx_enter(&se))
        return NVTX_NO_PUSH_POP_TRACKING;
    struct gt_event e;
    gt_nvtx_init_event(&e, GT_NVTX_PUSH, domain);
    if (a)
        gt_nvtx_attr(&e, a);
    else
        e.u.nvtx.name = ms ? gt_nvtx_intern_a(ms) : gt_nvtx_intern_w(mw);
    gt_nvtx_push_event(&e, 1);
    int32_t *d = gt_nvtx_depth_of(domain);
    int level = d ? (*d)++ : 0;
    gt_nvtx_leave(se);
    return level;
}

static int gt_nvtx_pop(uint32_t domain)
{
    int se;
    if (atomic_load_explicit(&gt_steps_on, memory_order_relaxed) && !gt_tls_busy)
        gt_steps_pop();
    if (!gt_nvtx_enter(&se)) {
        if (atomic_load_explicit(&gt_crange_nvtx_on, memory_order_relaxed) && !gt_tls_busy)
            gt_crange_pop(domain); /* keeps the nesting count; no window is open */
        return NVTX_NO_PUSH_POP_TRACKING;
    }
    struct gt_event e;
    gt_nvtx_init_event(&e, GT_NVTX_POP, domain);
    gt_nvtx_push_event(&e, 0);
    /* After its own pop is recorded: a capture range's window closes. */
    if (atomic_load_explicit(&gt_crange_nvtx_on, memory_order_relaxed))
        gt_crange_pop(domain);
    int32_t *d = gt_nvtx_depth_of(domain);
    int level = 0;
    if (d)
        level = *d > 0 ? --*d : -1; /* a pop with nothing pushed: NVTX's error value */
    gt_nvtx_leave(se);
    return level;
}

static nvtxRangeId_t gt_nvtx_started(uint32_t domain, const nvtxEventAttributes_t *a, const char *ms,
                                     const wchar_t *mw, uint64_t id, int se);

static nvtxRangeId_t gt_nvtx_start(uint32_t domain, const nvtxEventAttributes_t *a, const char *ms,
                                   const wchar_t *mw)
{
    int se;
    gt_nvtx_wake();
    int steps = atomic_load_explicit(&gt_steps_on, memory_order_relaxed);
    int crange = atomic_load_explicit(&gt_crange_nvtx_on, memory_order_relaxed);
    if ((steps || crange) && !gt_tls_busy) {
        /* Outside recording too: a step's or capture range's id must come
         * back at its end. */
        uint64_t id = atomic_fetch_add_explicit(&gt_nvtx_next_range, 1, memory_order_relaxed) + 1;
        if (steps)
            gt_steps_start(id, gt_nvtx_ascii(a, ms));
        if (crange) {
            size_t len = 0;
            const char *name = gt_nvtx_match_name(a, ms, &len);
            gt_crange_start(id, domain, name, len);
        }
        if (!gt_nvtx_enter(&se))
            return id;
        return gt_nvtx_started(domain, a, ms, mw, id, se);
    }
    if (!gt_nvtx_enter(&se))
        return 0;
    /* One count for the process: a thread id may come back after its
     * thread ended, so ids made from it could repeat. */
    return gt_nvtx_started(domain, a, ms, mw,
                           atomic_fetch_add_explicit(&gt_nvtx_next_range, 1, memory_order_relaxed) + 1, se);
}

static nvtxRangeId_t gt_nvtx_started(uint32_t domain, const nvtxEventAttributes_t *a, const char *ms,
                                     const wchar_t *mw, uint64_t id, int se)
{
    struct gt_event e;
    gt_nvtx_init_event(&e, GT_NVTX_START, domain);
    e.u.nvtx.id = id;
    if (a)
        gt_nvtx_attr(&e, a);
    else
        e.u.nvtx.name = ms ? gt_nvtx_intern_a(ms) : gt_nvtx_intern_w(mw);
    gt_nvtx_push_event(&e, 1);
    gt_nvtx_leave(se);
    return e.u.nvtx.id;
}

static void gt_nvtx_end(uint32_t domain, nvtxRangeId_t id)
{
    int se;
    if (atomic_load_explicit(&gt_steps_on, memory_order_relaxed) && !gt_tls_busy)
        gt_steps_end(id);
    if (!gt_nvtx_enter(&se))
        return;
    struct gt_event e;
    gt_nvtx_init_event(&e, GT_NVTX_END, domain);
    e.u.nvtx.id = id;
    gt_nvtx_push_event(&e, 0);
    if (atomic_load_explicit(&gt_crange_nvtx_on, memory_order_relaxed))
        gt_crange_end(id);
    gt_nvtx_leave(se);
}

static void gt_nvtx_mark(uint32_t domain, const nvtxEventAttributes_t *a, const char *ms, const wchar_t *mw)
{
    int se;
    if (!gt_nvtx_enter(&se))
        return;
    struct gt_event e;
    gt_nvtx_init_event(&e, GT_NVTX_MARK, domain);
    if (a)
        gt_nvtx_attr(&e, a);
    else
        e.u.nvtx.name = ms ? gt_nvtx_intern_a(ms) : gt_nvtx_intern_w(mw);
    gt_nvtx_push_event(&e, 1);
    gt_nvtx_leave(se);
}

static void gt_nvtx_name(int kind, uint32_t domain, uint64_t object, const char *ms, const wchar_t *mw)
{
    int se;
    if (!gt_nvtx_enter(&se))
        return;
    struct gt_event e;
    gt_nvtx_init_event(&e, kind, domain);
    e.u.nvtx.id = object;
    e.u.nvtx.name = ms ? gt_nvtx_intern_a(ms) : gt_nvtx_intern_w(mw);
    gt_nvtx_push_event(&e, 0);
    gt_nvtx_leave(se);
}

/* ---- the callbacks NVTX calls ---- */

static void NVTX_API gt_cb_MarkEx(const nvtxEventAttributes_t *a) { gt_nvtx_mark(0, a, NULL, NULL); }
static void NVTX_API gt_cb_MarkA(const char *m) { gt_nvtx_mark(0, NULL, m, NULL); }
static void NVTX_API gt_cb_MarkW(const wchar_t *m) { gt_nvtx_mark(0, NULL, NULL, m); }
static nvtxRangeId_t NVTX_API gt_cb_RangeStartEx(const nvtxEventAttributes_t *a) { return gt_nvtx_start(0, a, NULL, NULL); }
static nvtxRangeId_t NVTX_API gt_cb_RangeStartA(const char *m) { return gt_nvtx_start(0, NULL, m, NULL); }
static nvtxRangeId_t NVTX_API gt_cb_RangeStartW(const wchar_t *m) { return gt_nvtx_start(0, NULL, NULL, m); }
static void NVTX_API gt_cb_RangeEnd(nvtxRangeId_t id) { gt_nvtx_end(0, id); }
static int NVTX_API gt_cb_RangePushEx(const nvtxEventAttributes_t *a) { return gt_nvtx_push(0, a, NULL, NULL); }
static int NVTX_API gt_cb_RangePushA(const char *m) { return gt_nvtx_push(0, NULL, m, NULL); }
static int NVTX_API gt_cb_RangePushW(const wchar_t *m) { return gt_nvtx_push(0, NULL, NULL, m); }
static int NVTX_API gt_cb_RangePop(void) { return gt_nvtx_pop(0); }
static void NVTX_API gt_cb_NameCategoryA(uint32_t c, const char *n) { gt_nvtx_name(GT_NVTX_NAME_CATEGORY, 0, c, n, NULL); }
static void NVTX_API gt_cb_NameCategoryW(uint32_t c, const wchar_t *n) { gt_nvtx_name(GT_NVTX_NAME_CATEGORY, 0, c, NULL, n); }
static void NVTX_API gt_cb_NameOsThreadA(uint32_t t, const char *n) { gt_nvtx_name(GT_NVTX_NAME_THREAD, 0, t, n, NULL); }
static void NVTX_API gt_cb_NameOsThreadW(uint32_t t, const wchar_t *n) { gt_nvtx_name(GT_NVTX_NAME_THREAD, 0, t, NULL, n); }

static void NVTX_API gt_cb_DomainMarkEx(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a)
{
    gt_nvtx_mark(gt_nvtx_domain_id(d), a, NULL, NULL);
}
static nvtxRangeId_t NVTX_API gt_cb_DomainRangeStartEx(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a)
{
    return gt_nvtx_start(gt_nvtx_domain_id(d), a, NULL, NULL);
}
static void NVTX_API gt_cb_DomainRangeEnd(nvtxDomainHandle_t d, nvtxRangeId_t id) { gt_nvtx_end(gt_nvtx_domain_id(d), id); }
static int NVTX_API gt_cb_DomainRangePushEx(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a)
{
    return gt_nvtx_push(gt_nvtx_domain_id(d), a, NULL, NULL);
}
static int NVTX_API gt_cb_DomainRangePop(nvtxDomainHandle_t d) { return gt_nvtx_pop(gt_nvtx_domain_id(d)); }
static void NVTX_API gt_cb_DomainNameCategoryA(nvtxDomainHandle_t d, uint32_t c, const char *n)
{
    gt_nvtx_name(GT_NVTX_NAME_CATEGORY, gt_nvtx_domain_id(d), c, n, NULL);
}
static void NVTX_API gt_cb_DomainNameCategoryW(nvtxDomainHandle_t d, uint32_t c, const wchar_t *n)
{
    gt_nvtx_name(GT_NVTX_NAME_CATEGORY, gt_nvtx_domain_id(d), c, NULL, n);
}
/* Registered strings and domains are handles to their interned string:
 * nothing to record, and the same text gives the same handle. */
static nvtxStringHandle_t NVTX_API gt_cb_DomainRegisterStringA(nvtxDomainHandle_t d, const char *s)
{
    (void)d;
    return (nvtxStringHandle_t)(uintptr_t)gt_nvtx_intern_a(s);
}
static nvtxStringHandle_t NVTX_API gt_cb_DomainRegisterStringW(nvtxDomainHandle_t d, const wchar_t *s)
{
    (void)d;
    return (nvtxStringHandle_t)(uintptr_t)gt_nvtx_intern_w(s);
}
static nvtxDomainHandle_t NVTX_API gt_cb_DomainCreateA(const char *n)
{
    return (nvtxDomainHandle_t)(uintptr_t)gt_nvtx_intern_a(n);
}
static nvtxDomainHandle_t NVTX_API gt_cb_DomainCreateW(const wchar_t *n)
{
    return (nvtxDomainHandle_t)(uintptr_t)gt_nvtx_intern_w(n);
}
static void NVTX_API gt_cb_DomainDestroy(nvtxDomainHandle_t d) { (void)d; }
static void NVTX_API gt_cb_Initialize(const void *r) { (void)r; }

static void NVTX_API gt_cb_NameCuStreamA(void *s, const char *n) { gt_nvtx_name(GT_NVTX_NAME_CUSTREAM, 0, (uintptr_t)s, n, NULL); }
static void NVTX_API gt_cb_NameCuStreamW(void *s, const wchar_t *n) { gt_nvtx_name(GT_NVTX_NAME_CUSTREAM, 0, (uintptr_t)s, NULL, n); }
static void NVTX_API gt_cb_NameCudaStreamA(void *s, const char *n) { gt_nvtx_name(GT_NVTX_NAME_STREAM, 0, (uintptr_t)s, n, NULL); }
static void NVTX_API gt_cb_NameCudaStreamW(void *s, const wchar_t *n) { gt_nvtx_name(GT_NVTX_NAME_STREAM, 0, (uintptr_t)s, NULL, n); }

/* ---- attaching ---- */

struct gt_nvtx_slot {
    unsigned cbid;
    NvtxFunctionPointer fn;
};

#define GT_CB(id, f) {id, (NvtxFunctionPointer)(f)}
static const struct gt_nvtx_slot gt_core[] = {
    GT_CB(NVTX_CBID_CORE_MarkEx, gt_cb_MarkEx), GT_CB(NVTX_CBID_CORE_MarkA, gt_cb_MarkA),
    GT_CB(NVTX_CBID_CORE_MarkW, gt_cb_MarkW), GT_CB(NVTX_CBID_CORE_RangeStartEx, gt_cb_RangeStartEx),
    GT_CB(NVTX_CBID_CORE_RangeStartA, gt_cb_RangeStartA), GT_CB(NVTX_CBID_CORE_RangeStartW, gt_cb_RangeStartW),
    GT_CB(NVTX_CBID_CORE_RangeEnd, gt_cb_RangeEnd), GT_CB(NVTX_CBID_CORE_RangePushEx, gt_cb_RangePushEx),
    GT_CB(NVTX_CBID_CORE_RangePushA, gt_cb_RangePushA), GT_CB(NVTX_CBID_CORE_RangePushW, gt_cb_RangePushW),
    GT_CB(NVTX_CBID_CORE_RangePop, gt_cb_RangePop), GT_CB(NVTX_CBID_CORE_NameCategoryA, gt_cb_NameCategoryA),
    GT_CB(NVTX_CBID_CORE_NameCategoryW, gt_cb_NameCategoryW),
    GT_CB(NVTX_CBID_CORE_NameOsThreadA, gt_cb_NameOsThreadA),
    GT_CB(NVTX_CBID_CORE_NameOsThreadW, gt_cb_NameOsThreadW),
};
static const struct gt_nvtx_slot gt_core2[] = {
    GT_CB(NVTX_CBID_CORE2_DomainMarkEx, gt_cb_DomainMarkEx),
    GT_CB(NVTX_CBID_CORE2_DomainRangeStartEx, gt_cb_DomainRangeStartEx),
    GT_CB(NVTX_CBID_CORE2_DomainRangeEnd, gt_cb_DomainRangeEnd),
    GT_CB(NVTX_CBID_CORE2_DomainRangePushEx, gt_cb_DomainRangePushEx),
    GT_CB(NVTX_CBID_CORE2_DomainRangePop, gt_cb_DomainRangePop),
    GT_CB(NVTX_CBID_CORE2_DomainNameCategoryA, gt_cb_DomainNameCategoryA),
    GT_CB(NVTX_CBID_CORE2_DomainNameCategoryW, gt_cb_DomainNameCategoryW),
    GT_CB(NVTX_CBID_CORE2_DomainRegisterStringA, gt_cb_DomainRegisterStringA),
    GT_CB(NVTX_CBID_CORE2_DomainRegisterStringW, gt_cb_DomainRegisterStringW),
    GT_CB(NVTX_CBID_CORE2_DomainCreateA, gt_cb_DomainCreateA),
    GT_CB(NVTX_CBID_CORE2_DomainCreateW, gt_cb_DomainCreateW),
    GT_CB(NVTX_CBID_CORE2_DomainDestroy, gt_cb_DomainDestroy),
    GT_CB(NVTX_CBID_CORE2_Initialize, gt_cb_Initialize),
};
static const struct gt_nvtx_slot gt_cuda[] = {
    GT_CB(NVTX_CBID_CUDA_NameCuStreamA, gt_cb_NameCuStreamA),
    GT_CB(NVTX_CBID_CUDA_NameCuStreamW, gt_cb_NameCuStreamW),
};
static const struct gt_nvtx_slot gt_cudart[] = {
    GT_CB(NVTX_CBID_CUDART_NameCudaStreamA, gt_cb_NameCudaStreamA),
    GT_CB(NVTX_CBID_CUDART_NameCudaStreamW, gt_cb_NameCudaStreamW),
};

/* Fills one module's slots that the program's NVTX has (an older NVTX has
 * fewer). 0 when the module's table cannot be had. */
static int gt_nvtx_fill(const NvtxExportTableCallbacks *etc, NvtxCallbackModule module,
                        const struct gt_nvtx_slot *slots, size_t n)
{
    NvtxFunctionTable table = NULL;
    unsigned int size = 0;
    if (!etc->GetModuleFunctionTable(module, &table, &size) || !table)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (slots[i].cbid < size && table[slots[i].cbid])
            *table[slots[i].cbid] = slots[i].fn;
    return 1;
}

typedef int (*gt_nvtx_init_fn)(NvtxGetExportTableFunc_t);

/* A second copy of this library (NVTX_INJECTION64_PATH naming it by
 * another path than LD_PRELOAD's) hands over to the preloaded one, whose
 * session and rings are the ones that record. */
GT_EXPORT int gputrace_nvtx_attach(NvtxGetExportTableFunc_t get);

GT_EXPORT int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get)
{
    gt_nvtx_init_fn first = (gt_nvtx_init_fn)dlsym(RTLD_DEFAULT, "gputrace_nvtx_attach");
    if (first && first != gputrace_nvtx_attach)
        return first(get);
    return gputrace_nvtx_attach(get);
}

int gputrace_nvtx_attach(NvtxGetExportTableFunc_t get)
{
    /* GPUTRACE_NVTX=0 leaves NVTX unrecorded whichever way the shim was
     * named its tool (read here: NVTX may start before the settings). */
    const char *off = getenv("GPUTRACE_NVTX");
    if (!get || (off && strcmp(off, "0") == 0))
        return 0;
    const NvtxExportTableCallbacks *etc = get(NVTX_ETID_CALLBACKS);
    if (!etc || etc->struct_size < sizeof(*etc) || !etc->GetModuleFunctionTable)
        return 0;
    pthread_once(&gt_nvtx_once, gt_nvtx_table_init);
    if (!gt_nvtx_strs.slots)
        return 0;
    const NvtxExportTableVersionInfo *vi = get(NVTX_ETID_VERSIONINFO);
    if (vi && vi->struct_size >= sizeof(*vi) && vi->SetInjectionNvtxVersion)
        vi->SetInjectionNvtxVersion(NVTX_VERSION);
    if (!gt_nvtx_fill(etc, NVTX_CB_MODULE_CORE, gt_core, sizeof(gt_core) / sizeof(gt_core[0])))
        return 0;
    gt_nvtx_fill(etc, NVTX_CB_MODULE_CORE2, gt_core2, sizeof(gt_core2) / sizeof(gt_core2[0]));
    gt_nvtx_fill(etc, NVTX_CB_MODULE_CUDA, gt_cuda, sizeof(gt_cuda) / sizeof(gt_cuda[0]));
    gt_nvtx_fill(etc, NVTX_CB_MODULE_CUDART, gt_cudart, sizeof(gt_cudart) / sizeof(gt_cudart[0]));
    return 1;
}
