/* gt_python.c: Python stacks without the GIL.
 *
 * What makes it safe: the calling thread is inside a CUDA call, so its own
 * frame chain holds still, and every frame holds a reference to its code
 * object, whose strings and line table are immutable. Nothing here takes
 * the GIL, allocates, or touches a reference count; every object read is
 * checked to be of the type expected before its fields are used, and an
 * interpreter this file has no layout for is left alone, with one warning.
 *
 * The thread's state comes from PyGILState_GetThisThreadState, which reads
 * a thread-specific key and stays valid while the GIL is released (the way
 * PyTorch and ctypes.CDLL call into CUDA). */
#include <dlfcn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "base/gt_idtab.h"
#include "hot/gt_py_layouts.h"
#include "hot/gt_python.h"
#include "hot/gt_stacks.h"
#include "hot/gt_threads.h"

#define GT_PY_CODE_SLOTS (1u << 16)
#define GT_PY_CODE_MAX   (GT_PY_CODE_SLOTS / 2)
#define GT_PY_ARENA      (32u << 20)  /* bytes: names, files, line tables */
#define GT_PY_MAX_WALK   4096         /* frames walked before giving up */
#define GT_PY_OWNED_BY_CSTACK 3       /* 3.12+: the interpreter's own entry frames */

struct gt_pycode_rec {
    uint64_t code, fingerprint;
    uint32_t file_off, name_off, table_off, table_len;
    int32_t first_line;
};

typedef void *(*gt_py_tstate_fn)(void);
typedef int (*gt_py_flag_fn)(void);

static struct {
    int on;
    int depth;
    char version[16];
    struct gt_py_layout L;
    gt_py_tstate_fn this_thread_state;
    gt_py_flag_fn is_initialized, is_finalizing;
    uintptr_t code_type, str_type, bytes_type;
} gt_py;

static struct gt_idtab gt_pystacks;
static _Atomic(uint32_t) *gt_code_slots;
static struct gt_pycode_rec *gt_codes;
static char *gt_code_arena;
static _Atomic(uint32_t) gt_code_next, gt_code_arena_used;
static _Atomic(uint64_t) gt_py_drops;

static inline uint64_t gt_ld64(uintptr_t a)
{
    return *(const uint64_t *)a;
}

static inline uint32_t gt_ld32(uintptr_t a)
{
    return *(const uint32_t *)a;
}

static inline int gt_is(uintptr_t obj, uintptr_t type)
{
    return obj && !(obj & 7) && gt_ld64(obj + gt_py.L.ob_type) == type;
}

/* ---- copies of code objects ---- */

static void *gt_py_map(size_t bytes)
{
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

static uint32_t gt_arena_take(uint32_t n)
{
    uint32_t off = atomic_fetch_add_explicit(&gt_code_arena_used, n, memory_order_relaxed);
    if (off + n > GT_PY_ARENA || off + n < off)
        return UINT32_MAX;
    return off;
}

static size_t gt_utf8_put(char *out, uint32_t c)
{
    if (c < 0x80) {
        out[0] = (char)c;
        return 1;
    }
    if (c < 0x800) {
        out[0] = (char)(0xc0 | (c >> 6));
        out[1] = (char)(0x80 | (c & 63));
        return 2;
    }
    if (c < 0x10000) {
        out[0] = (char)(0xe0 | (c >> 12));
        out[1] = (char)(0x80 | ((c >> 6) & 63));
        out[2] = (char)(0x80 | (c & 63));
        return 3;
    }
    out[0] = (char)(0xf0 | (c >> 18));
    out[1] = (char)(0x80 | ((c >> 12) & 63));
    out[2] = (char)(0x80 | ((c >> 6) & 63));
    out[3] = (char)(0x80 | (c & 63));
    return 4;
}

/* Copies a str into the arena as UTF-8. Only compact strings (every str a
 * code object holds is one) are read; anything else reads "?". */
static uint32_t gt_copy_str(uintptr_t s)
{
    static const char unknown[] = "?";
    const struct gt_py_layout *L = &gt_py.L;
    const char *src = unknown;
    uint64_t len = 1;
    unsigned kind = 1, ascii = 1;
    if (gt_is(s, gt_py.str_type)) {
        uint32_t state = gt_ld32(s + L->str_state);
        unsigned compact = (state >> 5) & 1;
        kind = (state >> 2) & 7;
        ascii = (state >> 6) & 1;
        if (compact && (kind == 1 || kind == 2 || kind == 4)) {
            len = gt_ld64(s + L->str_length);
            src = (const char *)(s + (ascii ? L->str_ascii_size : L->str_compact_size));
        } else {
            kind = 1;
            ascii = 1;
        }
    }
    if (len > GT_PY_MAX_STR)
        len = GT_PY_MAX_STR;
    uint32_t off = gt_arena_take((uint32_t)(len * (ascii ? 1 : 4) + 1));
    if (off == UINT32_MAX)
        return off;
    char *out = gt_code_arena + off;
    size_t o = 0;
    if (ascii) {
        memcpy(out, src, len);
        o = len;
    } else {
        for (uint64_t i = 0; i < len; i++) {
            uint32_t c = kind == 1 ? ((const uint8_t *)src)[i]
                         : kind == 2 ? ((const uint16_t *)(const void *)src)[i]
                                     : ((const uint32_t *)(const void *)src)[i];
            o += gt_utf8_put(out + o, c ? c : '?');
        }
    }
    out[o] = 0;
    return off;
}

/* `img`: the code object itself, or (the sampler) a copy of its first
 * bytes; `code`: its address in the process. */
static uint64_t gt_code_fingerprint(uintptr_t img)
{
    const struct gt_py_layout *L = &gt_py.L;
    /* A code object freed and another allocated at its address would have
     * other strings and another table. */
    return gt_ld64(img + L->co_filename) ^ (gt_ld64(img + L->co_qualname) << 1) ^
           (gt_ld64(img + L->co_linetable) << 2) ^ gt_ld32(img + L->co_firstlineno);
}

/* An object the code object points to, readable here: itself on the
 * calling thread, a checked copy through `fetch` on the sampler's. */
static uintptr_t gt_obj(uintptr_t p, int kind, gt_py_fetch_fn fetch, void *ctx)
{
    return fetch ? fetch(p, kind, ctx) : p;
}

static uint32_t gt_code_new(uintptr_t code, uintptr_t img, uint64_t fp, gt_py_fetch_fn fetch, void *ctx)
{
    const struct gt_py_layout *L = &gt_py.L;
    /* The sampler's copies can fail: checked before an id is spent. */
    uintptr_t fname = gt_obj(gt_ld64(img + L->co_filename), GT_PYOBJ_STR, fetch, ctx);
    if (!fname)
        return 0;
    uint32_t id = atomic_fetch_add_explicit(&gt_code_next, 1, memory_order_relaxed) + 1;
    if (id > GT_PY_CODE_MAX)
        return 0;
    struct gt_pycode_rec *r = &gt_codes[id];
    r->code = code;
    r->fingerprint = fp;
    r->first_line = (int32_t)gt_ld32(img + L->co_firstlineno);
    r->file_off = gt_copy_str(fname);
    uintptr_t qname = gt_obj(gt_ld64(img + L->co_qualname), GT_PYOBJ_STR, fetch, ctx);
    r->name_off = qname ? gt_copy_str(qname) : UINT32_MAX;
    r->table_off = UINT32_MAX;
    r->table_len = 0;
    uintptr_t table = gt_obj(gt_ld64(img + L->co_linetable), GT_PYOBJ_BYTES, fetch, ctx);
    if (table && gt_is(table, gt_py.bytes_type)) {
        uint64_t n = gt_ld64(table + L->var_size);
        if (n <= GT_PY_MAX_TABLE && (r->table_off = gt_arena_take((uint32_t)n)) != UINT32_MAX) {
            memcpy(gt_code_arena + r->table_off, (const void *)(table + L->bytes_sval), n);
            r->table_len = (uint32_t)n;
        }
    }
    if (r->file_off == UINT32_MAX || r->name_off == UINT32_MAX)
        return 0;
    return id;
}

/* The id of a code object, copied the first time it is seen. */
static uint32_t gt_code_id_at(uintptr_t code, uintptr_t img, gt_py_fetch_fn fetch, void *ctx)
{
    uint64_t fp = gt_code_fingerprint(img);
    uint64_t h = (code ^ fp) * 0x9E3779B97F4A7C15ull;
    uint32_t mask = GT_PY_CODE_SLOTS - 1, i = (uint32_t)(h >> 40) & mask, mine = 0;
    for (uint32_t probe = 0; probe < GT_PY_CODE_SLOTS; probe++, i = (i + 1) & mask) {
        uint32_t id = atomic_load_explicit(&gt_code_slots[i], memory_order_acquire);
        if (id == 0) {
            if (!mine)
                mine = gt_code_new(code, img, fp, fetch, ctx);
            if (!mine)
                break;
            if (atomic_compare_exchange_strong_explicit(&gt_code_slots[i], &id, mine, memory_order_acq_rel,
                                                        memory_order_acquire))
                return mine;
        }
        if (gt_codes[id].code == code && gt_codes[id].fingerprint == fp)
            return id;
    }
    atomic_fetch_add_explicit(&gt_py_drops, 1, memory_order_relaxed);
    return 0;
}

static inline uint32_t gt_code_id(uintptr_t code)
{
    return gt_code_id_at(code, code, NULL, NULL);
}

uint32_t gt_python_code_id_copied(uintptr_t code, const void *img, gt_py_fetch_fn fetch, void *ctx)
{
    return gt_code_id_at(code, (uintptr_t)img, fetch, ctx);
}

uint32_t gt_python_intern(const uint64_t *frames, uint32_t n)
{
    uint32_t id = gt_idtab_intern(&gt_pystacks, frames, n);
    if (!id)
        atomic_fetch_add_explicit(&gt_py_drops, 1, memory_order_relaxed);
    return id;
}

const struct gt_py_layout *gt_python_layout(void)
{
    return gt_py.on ? &gt_py.L : NULL;
}

void gt_python_types(uintptr_t *code, uintptr_t *str, uintptr_t *bytes)
{
    *code = gt_py.code_type;
    *str = gt_py.str_type;
    *bytes = gt_py.bytes_type;
}

int gt_python_live(void)
{
    return gt_py.on && gt_py.is_initialized() && !gt_py.is_finalizing();
}

int gt_python_depth(void)
{
    return gt_py.depth;
}

/* ---- the walk ---- */

uint32_t gt_python_capture(void)
{
    if (!gt_py.on || !gt_py.is_initialized() || gt_py.is_finalizing())
        return 0;
    const struct gt_py_layout *L = &gt_py.L;
    uintptr_t ts = (uintptr_t)gt_py.this_thread_state();
    gt_threads_note_pystate(ts);
    if (!ts)
        return 0;
    uintptr_t fr = gt_ld64(ts + L->ts_frame);
    if (fr && L->cframe_current != GT_PY_NONE)
        fr = gt_ld64(fr + L->cframe_current);
    uint64_t frames[GT_STACK_MAX_DEPTH];
    uint32_t n = 0;
    for (int walked = 0; fr && !(fr & 7) && n < (uint32_t)gt_py.depth && walked < GT_PY_MAX_WALK;
         walked++, fr = gt_ld64(fr + L->fr_back)) {
        if (L->fr_owner != GT_PY_NONE && *(const uint8_t *)(fr + L->fr_owner) == GT_PY_OWNED_BY_CSTACK)
            continue;
        uintptr_t code = gt_ld64(fr + L->fr_code);
        if (!gt_is(code, gt_py.code_type))
            continue;
        int64_t lasti;
        if (L->co_code == GT_PY_NONE)
            lasti = (int32_t)gt_ld32(fr + L->fr_instr);
        else
            lasti = ((int64_t)gt_ld64(fr + L->fr_instr) - (int64_t)(code + L->co_code)) / 2;
        /* Negative: a frame still being set up, with no instruction run. */
        if (lasti < 0 || lasti > INT32_MAX)
            continue;
        uint32_t cid = gt_code_id(code);
        if (!cid)
            continue;
        frames[n++] = ((uint64_t)cid << 32) | (uint64_t)lasti;
    }
    if (!n)
        return 0;
    uint32_t id = gt_idtab_intern(&gt_pystacks, frames, n);
    if (!id)
        atomic_fetch_add_explicit(&gt_py_drops, 1, memory_order_relaxed);
    return id;
}

uint32_t gt_pystack_frames(uint32_t id, const uint64_t **frames)
{
    return gt_idtab_get(&gt_pystacks, id, frames);
}

int gt_pycode_get(uint32_t id, struct gt_pycode *out)
{
    if (id == 0 || id > GT_PY_CODE_MAX || id > atomic_load(&gt_code_next) || !gt_codes)
        return -1;
    const struct gt_pycode_rec *r = &gt_codes[id];
    out->file = gt_code_arena + r->file_off;
    out->name = gt_code_arena + r->name_off;
    out->linetable = r->table_off == UINT32_MAX ? NULL : (const uint8_t *)gt_code_arena + r->table_off;
    out->linetable_len = r->table_len;
    out->first_line = r->first_line;
    return 0;
}

int gt_python_minor(void)
{
    return (int)gt_py.L.minor;
}

const char *gt_python_version(void)
{
    return gt_py.on ? gt_py.version : "";
}

uint64_t gt_python_dropped(void)
{
    return atomic_load(&gt_py_drops) + atomic_load(&gt_pystacks.drops);
}

/* ---- finding the interpreter ---- */

/* The prefix of 3.13's _Py_DebugOffsets that the walker needs
 * (Include/internal/pycore_runtime.h); stable across 3.13 patch releases. */
struct gt_debug_offsets_313 {
    char cookie[8];
    uint64_t version, free_threaded;
    uint64_t runtime_state[3];
    uint64_t interpreter_state[13];
    struct { uint64_t size, prev, next, interp, current_frame, thread_id, native_thread_id, datastack_chunk,
             status; } thread_state;
    struct { uint64_t size, previous, executable, instr_ptr, localsplus, owner; } interpreter_frame;
    struct { uint64_t size, filename, name, qualname, linetable, firstlineno, argcount, localsplusnames,
             localspluskinds, co_code_adaptive; } code_object;
    struct { uint64_t size, ob_type; } pyobject;
    uint64_t type_object[4], tuple_object[3], list_object[3], dict_object[3], float_object[2], long_object[3];
    struct { uint64_t size, ob_size, ob_sval; } bytes_object;
    struct { uint64_t size, state, length, asciiobject_size; } unicode_object;
};

static int gt_layout_from_debug_offsets(const void *runtime, struct gt_py_layout *L, char *why, size_t why_len)
{
    const struct gt_debug_offsets_313 *d = runtime;
    if (memcmp(d->cookie, "xdebugpy", 8) != 0) {
        snprintf(why, why_len, "its debug offsets are missing");
        return -1;
    }
    if (d->free_threaded) {
        snprintf(why, why_len, "free-threaded builds are not supported yet");
        return -1;
    }
    L->ts_frame = (uint32_t)d->thread_state.current_frame;
    L->cframe_current = GT_PY_NONE;
    L->fr_back = (uint32_t)d->interpreter_frame.previous;
    L->fr_code = (uint32_t)d->interpreter_frame.executable;
    L->fr_instr = (uint32_t)d->interpreter_frame.instr_ptr;
    L->fr_owner = (uint32_t)d->interpreter_frame.owner;
    L->co_filename = (uint32_t)d->code_object.filename;
    L->co_name = (uint32_t)d->code_object.name;
    L->co_qualname = (uint32_t)d->code_object.qualname;
    L->co_linetable = (uint32_t)d->code_object.linetable;
    L->co_firstlineno = (uint32_t)d->code_object.firstlineno;
    L->co_code = (uint32_t)d->code_object.co_code_adaptive;
    L->ob_type = (uint32_t)d->pyobject.ob_type;
    L->var_size = (uint32_t)d->bytes_object.ob_size;
    L->bytes_sval = (uint32_t)d->bytes_object.ob_sval;
    L->str_length = (uint32_t)d->unicode_object.length;
    L->str_state = (uint32_t)d->unicode_object.state;
    L->str_ascii_size = (uint32_t)d->unicode_object.asciiobject_size;
    /* PyCompactUnicodeObject adds utf8_length and utf8 (3.12 and later). */
    L->str_compact_size = L->str_ascii_size + 16;
    return 0;
}

static void *gt_py_sym(const char *name)
{
    return dlsym(RTLD_DEFAULT, name);
}

int gt_python_init(int depth, char *why, size_t why_len)
{
    why[0] = 0;
    memset(&gt_py, 0, sizeof(gt_py));
    gt_py.this_thread_state = (gt_py_tstate_fn)gt_py_sym("PyGILState_GetThisThreadState");
    gt_py.is_initialized = (gt_py_flag_fn)gt_py_sym("Py_IsInitialized");
    if (!gt_py.this_thread_state || !gt_py.is_initialized)
        return 0; /* no Python here */
    if (depth <= 0) {
        snprintf(why, why_len, "stacks are off");
        return 0;
    }
    unsigned long hex = 0;
    const unsigned long *pv = gt_py_sym("Py_Version");
    if (pv) {
        hex = *pv;
    } else {
        const char *(*get_version)(void) = (const char *(*)(void))gt_py_sym("Py_GetVersion");
        unsigned major = 0, minor = 0;
        if (get_version && sscanf(get_version(), "%u.%u", &major, &minor) == 2)
            hex = ((unsigned long)major << 24) | ((unsigned long)minor << 16);
    }
    unsigned major = (unsigned)(hex >> 24) & 0xff, minor = (unsigned)(hex >> 16) & 0xff;
    snprintf(gt_py.version, sizeof(gt_py.version), "%u.%u", major, minor);
    const struct gt_py_layout *row = NULL;
    for (size_t i = 0; i < sizeof(gt_py_layouts) / sizeof(gt_py_layouts[0]); i++)
        if (major == 3 && gt_py_layouts[i].minor == minor)
            row = &gt_py_layouts[i];
    if (!row) {
        snprintf(why, why_len, "Python %s is not one this build knows (3.10 to 3.13)", gt_py.version);
        return 0;
    }
    if (gt_py_sym("_Py_NegativeRefcount")) {
        snprintf(why, why_len, "Python %s is a debug build, whose objects are laid out differently",
                 gt_py.version);
        return 0;
    }
    gt_py.L = *row;
    if (minor >= 13) {
        const void *runtime = gt_py_sym("_PyRuntime");
        if (!runtime || gt_layout_from_debug_offsets(runtime, &gt_py.L, why, why_len) < 0) {
            if (!why[0])
                snprintf(why, why_len, "_PyRuntime is not visible");
            return 0;
        }
    }
    gt_py.is_finalizing = (gt_py_flag_fn)gt_py_sym(minor >= 13 ? "Py_IsFinalizing" : "_Py_IsFinalizing");
    gt_py.code_type = (uintptr_t)gt_py_sym("PyCode_Type");
    gt_py.str_type = (uintptr_t)gt_py_sym("PyUnicode_Type");
    gt_py.bytes_type = (uintptr_t)gt_py_sym("PyBytes_Type");
    if (!gt_py.is_finalizing || !gt_py.code_type || !gt_py.str_type || !gt_py.bytes_type) {
        snprintf(why, why_len, "Python %s lacks a symbol the stack reader needs", gt_py.version);
        return 0;
    }
    if (!gt_code_slots) {
        gt_code_slots = gt_py_map(sizeof(*gt_code_slots) * GT_PY_CODE_SLOTS);
        gt_codes = gt_py_map(sizeof(*gt_codes) * (GT_PY_CODE_MAX + 1));
        gt_code_arena = gt_py_map(GT_PY_ARENA);
    }
    if (!gt_code_slots || !gt_codes || !gt_code_arena ||
        gt_idtab_init(&gt_pystacks, 1u << 16, 1u << 20) < 0) {
        snprintf(why, why_len, "out of memory");
        return 0;
    }
    gt_py.depth = depth > GT_STACK_MAX_DEPTH ? GT_STACK_MAX_DEPTH : depth;
    gt_py.on = 1;
    return 1;
}
