/* gt_json.h: a small JSON reader (a tree of values), for the files
 * gputrace itself writes (rank summaries). Integers without a fraction or
 * exponent keep all 64 bits. */
#ifndef GT_JSON_H
#define GT_JSON_H

#include <stddef.h>
#include <stdint.h>

enum gt_json_type { GT_J_NULL, GT_J_BOOL, GT_J_NUM, GT_J_STR, GT_J_ARR, GT_J_OBJ };

struct gt_json {
    int type;
    int is_int;          /* GT_J_NUM written as an integer: u64/i64 exact */
    uint64_t u64;
    int64_t i64;
    double num;          /* every number; booleans 0/1 */
    char *str;           /* GT_J_STR */
    size_t n;            /* items of an array or object */
    struct gt_json *items;
    char **keys;         /* GT_J_OBJ */
};

/* Parses text[0..len) into *out. 0, or -1 with why (and where) in err. */
int gt_json_parse(const char *text, size_t len, struct gt_json *out, char *err, size_t err_len);
void gt_json_free(struct gt_json *j);
/* The value of key in object o; NULL if o is not an object or has none. */
const struct gt_json *gt_json_get(const struct gt_json *o, const char *key);
/* Its value as a number (def when absent or not a number). */
uint64_t gt_json_u64(const struct gt_json *o, const char *key, uint64_t def);
int64_t gt_json_i64(const struct gt_json *o, const char *key, int64_t def);
double gt_json_num(const struct gt_json *o, const char *key, double def);
/* Its string, or def. */
const char *gt_json_str(const struct gt_json *o, const char *key, const char *def);

#endif
