/* gt_json.c: a recursive-descent JSON reader (RFC 8259), depth-limited so
 * a hostile file cannot exhaust the stack. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/gt_json.h"

#define GT_JSON_DEPTH 64

struct gt_jp {
    const char *s, *end, *start;
    char *err;
    size_t err_len;
};

static int gt_jp_fail(struct gt_jp *p, const char *what)
{
    if (p->err && p->err_len && !p->err[0])
        snprintf(p->err, p->err_len, "%s at byte %zu", what, (size_t)(p->s - p->start));
    return -1;
}

static void gt_jp_ws(struct gt_jp *p)
{
    while (p->s < p->end && (*p->s == ' ' || *p->s == '\t' || *p->s == '\n' || *p->s == '\r'))
        p->s++;
}

static void gt_put_utf8(char **o, unsigned c)
{
    char *q = *o;
    if (c < 0x80) {
        *q++ = (char)c;
    } else if (c < 0x800) {
        *q++ = (char)(0xc0 | (c >> 6));
        *q++ = (char)(0x80 | (c & 0x3f));
    } else if (c < 0x10000) {
        *q++ = (char)(0xe0 | (c >> 12));
        *q++ = (char)(0x80 | ((c >> 6) & 0x3f));
        *q++ = (char)(0x80 | (c & 0x3f));
    } else {
        *q++ = (char)(0xf0 | (c >> 18));
        *q++ = (char)(0x80 | ((c >> 12) & 0x3f));
        *q++ = (char)(0x80 | ((c >> 6) & 0x3f));
        *q++ = (char)(0x80 | (c & 0x3f));
    }
    *o = q;
}

static int gt_jp_hex4(struct gt_jp *p, unsigned *v)
{
    if (p->end - p->s < 4)
        return gt_jp_fail(p, "short \\u escape");
    *v = 0;
    for (int i = 0; i < 4; i++) {
        char c = *p->s++;
        *v <<= 4;
        if (c >= '0' && c <= '9')
            *v |= (unsigned)(c - '0');
        else if (c >= 'a' && c <= 'f')
            *v |= (unsigned)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F')
            *v |= (unsigned)(c - 'A' + 10);
        else
            return gt_jp_fail(p, "bad \\u escape");
    }
    return 0;
}

/* p->s at the opening quote; a malloc'd string (escapes decoded) in *out. */
static int gt_jp_string(struct gt_jp *p, char **out)
{
    p->s++;
    const char *q = p->s;
    while (q < p->end && *q != '"')
        q += *q == '\\' ? 2 : 1;
    if (q >= p->end)
        return gt_jp_fail(p, "unterminated string");
    char *buf = malloc((size_t)(q - p->s) + 1), *o = buf;
    if (!buf)
        return gt_jp_fail(p, "out of memory");
    while (*p->s != '"') {
        char c = *p->s++;
        if ((unsigned char)c < 0x20) {
            free(buf);
            return gt_jp_fail(p, "control character in string");
        }
        if (c != '\\') {
            *o++ = c;
            continue;
        }
        c = *p->s++;
        switch (c) {
        case '"': case '\\': case '/': *o++ = c; break;
        case 'b': *o++ = '\b'; break;
        case 'f': *o++ = '\f'; break;
        case 'n': *o++ = '\n'; break;
        case 'r': *o++ = '\r'; break;
        case 't': *o++ = '\t'; break;
        case 'u': {
            unsigned v;
            if (gt_jp_hex4(p, &v) < 0) {
                free(buf);
                return -1;
            }
            if (v >= 0xd800 && v < 0xdc00 && p->end - p->s >= 6 && p->s[0] == '\\' && p->s[1] == 'u') {
                unsigned lo;
                p->s += 2;
                if (gt_jp_hex4(p, &lo) < 0) {
                    free(buf);
                    return -1;
                }
                v = 0x10000 + ((v - 0xd800) << 10) + (lo - 0xdc00);
            }
            /* at most 4 bytes out for the 6 or 12 read */
            gt_put_utf8(&o, v);
            break;
        }
        default:
            free(buf);
            return gt_jp_fail(p, "bad escape");
        }
    }
    p->s++;
    *o = 0;
    *out = buf;
    return 0;
}

static int gt_jp_value(struct gt_jp *p, struct gt_json *v, int depth);

static int gt_jp_push(struct gt_jp *p, struct gt_json *v, size_t *cap, char *key)
{
    if (v->n == *cap) {
        size_t c = *cap ? *cap * 2 : 8;
        struct gt_json *it = realloc(v->items, c * sizeof(*it));
        if (!it)
            return gt_jp_fail(p, "out of memory");
        v->items = it;
        if (v->type == GT_J_OBJ) {
            char **k = realloc(v->keys, c * sizeof(*k));
            if (!k)
                return gt_jp_fail(p, "out of memory");
            v->keys = k;
        }
        *cap = c;
    }
    memset(&v->items[v->n], 0, sizeof(v->items[0]));
    if (v->type == GT_J_OBJ)
        v->keys[v->n] = key;
    v->n++;
    return 0;
}

static int gt_jp_container(struct gt_jp *p, struct gt_json *v, int depth)
{
    int obj = *p->s == '{';
    char close = obj ? '}' : ']';
    v->type = obj ? GT_J_OBJ : GT_J_ARR;
    p->s++;
    size_t cap = 0;
    gt_jp_ws(p);
    if (p->s < p->end && *p->s == close) {
        p->s++;
        return 0;
    }
    for (;;) {
        char *key = NULL;
        gt_jp_ws(p);
        if (obj) {
            if (p->s >= p->end || *p->s != '"')
                return gt_jp_fail(p, "expected a key");
            if (gt_jp_string(p, &key) < 0)
                return -1;
            gt_jp_ws(p);
            if (p->s >= p->end || *p->s != ':') {
                free(key);
                return gt_jp_fail(p, "expected ':'");
            }
            p->s++;
        }
        if (gt_jp_push(p, v, &cap, key) < 0) {
            free(key);
            return -1;
        }
        if (gt_jp_value(p, &v->items[v->n - 1], depth + 1) < 0)
            return -1;
        gt_jp_ws(p);
        if (p->s < p->end && *p->s == ',') {
            p->s++;
            continue;
        }
        if (p->s < p->end && *p->s == close) {
            p->s++;
            return 0;
        }
        return gt_jp_fail(p, obj ? "expected ',' or '}'" : "expected ',' or ']'");
    }
}

static int gt_jp_number(struct gt_jp *p, struct gt_json *v)
{
    const char *q = p->s;
    int neg = q < p->end && *q == '-', frac = 0;
    if (neg)
        q++;
    const char *digits = q;
    while (q < p->end && ((*q >= '0' && *q <= '9') || *q == '.' || *q == 'e' || *q == 'E' || *q == '+' ||
                          *q == '-')) {
        if (*q == '.' || *q == 'e' || *q == 'E')
            frac = 1;
        q++;
    }
    if (q == digits || !(*digits >= '0' && *digits <= '9'))
        return gt_jp_fail(p, "bad number");
    char buf[64];
    size_t len = (size_t)(q - p->s);
    if (len >= sizeof(buf))
        return gt_jp_fail(p, "number too long");
    memcpy(buf, p->s, len);
    buf[len] = 0;
    char *end;
    v->type = GT_J_NUM;
    v->num = strtod(buf, &end);
    if (*end)
        return gt_jp_fail(p, "bad number");
    if (!frac) {
        v->is_int = 1;
        if (neg) {
            v->i64 = strtoll(buf, NULL, 10);
            v->u64 = 0;
        } else {
            v->u64 = strtoull(buf, NULL, 10);
            v->i64 = (int64_t)v->u64;
        }
    } else {
        v->u64 = v->num > 0 ? (uint64_t)v->num : 0;
        v->i64 = (int64_t)v->num;
    }
    p->s = q;
    return 0;
}

static int gt_jp_word(struct gt_jp *p, const char *w)
{
    size_t n = strlen(w);
    if ((size_t)(p->end - p->s) < n || memcmp(p->s, w, n) != 0)
        return gt_jp_fail(p, "unexpected character");
    p->s += n;
    return 0;
}

static int gt_jp_value(struct gt_jp *p, struct gt_json *v, int depth)
{
    if (depth > GT_JSON_DEPTH)
        return gt_jp_fail(p, "nested too deep");
    gt_jp_ws(p);
    if (p->s >= p->end)
        return gt_jp_fail(p, "unexpected end");
    switch (*p->s) {
    case '{':
    case '[':
        return gt_jp_container(p, v, depth);
    case '"':
        v->type = GT_J_STR;
        return gt_jp_string(p, &v->str);
    case 't':
        v->type = GT_J_BOOL;
        v->num = 1;
        v->u64 = 1;
        v->i64 = 1;
        return gt_jp_word(p, "true");
    case 'f':
        v->type = GT_J_BOOL;
        return gt_jp_word(p, "false");
    case 'n':
        v->type = GT_J_NULL;
        return gt_jp_word(p, "null");
    default:
        return gt_jp_number(p, v);
    }
}

int gt_json_parse(const char *text, size_t len, struct gt_json *out, char *err, size_t err_len)
{
    struct gt_jp p = {text, text + len, text, err, err_len};
    if (err && err_len)
        err[0] = 0;
    memset(out, 0, sizeof(*out));
    if (gt_jp_value(&p, out, 0) < 0) {
        gt_json_free(out);
        return -1;
    }
    gt_jp_ws(&p);
    if (p.s != p.end) {
        gt_json_free(out);
        return gt_jp_fail(&p, "text after the value");
    }
    return 0;
}

void gt_json_free(struct gt_json *j)
{
    if (!j)
        return;
    for (size_t i = 0; i < j->n && j->items; i++) {
        gt_json_free(&j->items[i]);
        if (j->keys)
            free(j->keys[i]);
    }
    free(j->items);
    free(j->keys);
    free(j->str);
    memset(j, 0, sizeof(*j));
}

const struct gt_json *gt_json_get(const struct gt_json *o, const char *key)
{
    if (!o || o->type != GT_J_OBJ)
        return NULL;
    for (size_t i = 0; i < o->n; i++)
        if (o->keys[i] && strcmp(o->keys[i], key) == 0)
            return &o->items[i];
    return NULL;
}

uint64_t gt_json_u64(const struct gt_json *o, const char *key, uint64_t def)
{
    const struct gt_json *v = gt_json_get(o, key);
    return v && (v->type == GT_J_NUM || v->type == GT_J_BOOL) ? v->u64 : def;
}

int64_t gt_json_i64(const struct gt_json *o, const char *key, int64_t def)
{
    const struct gt_json *v = gt_json_get(o, key);
    return v && (v->type == GT_J_NUM || v->type == GT_J_BOOL) ? v->i64 : def;
}

double gt_json_num(const struct gt_json *o, const char *key, double def)
{
    const struct gt_json *v = gt_json_get(o, key);
    return v && (v->type == GT_J_NUM || v->type == GT_J_BOOL) ? v->num : def;
}

const char *gt_json_str(const struct gt_json *o, const char *key, const char *def)
{
    const struct gt_json *v = gt_json_get(o, key);
    return v && v->type == GT_J_STR ? v->str : def;
}
