/* gt_extsort.h: fixed-size records sorted in bounded memory, for the
 * analyses whose figures need every value in order (exact medians and
 * percentiles, the GPU operations by start): records fill a buffer of at
 * most `mem` bytes; a full buffer is sorted and written as one run to an
 * unlinked temporary file (in $TMPDIR, else /tmp); the sorted whole is
 * read back by merging the runs, each through a small buffer. Memory is
 * the buffer plus 64 KiB a run, whatever the number of records (a run
 * per `mem` bytes of records); time is a sort of each buffer and a merge,
 * so linear in the records for a fixed buffer. A sort that never fills
 * its buffer touches no file.
 *
 * A sort that fails says why on standard error, once a process ("gputrace: a
 * temporary file in /tmp: No space left on device", or out of memory).
 *
 * The caller's comparison must be total: records it calls equal must be
 * the same (a caller that needs equal keys in the order they came numbers
 * its records), as neither qsort nor the merge keeps any order among them. */
#ifndef GT_EXTSORT_H
#define GT_EXTSORT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef int (*gt_xs_cmp)(const void *a, const void *b, void *arg);

struct gt_xs_run;

struct gt_extsort {
    size_t size;            /* one record's bytes */
    size_t cap;             /* records the buffer holds */
    gt_xs_cmp cmp;
    void *cmp_arg;
    unsigned char *buf;     /* records, each padded to 8 bytes */
    size_t n;               /* records in the buffer */
    uint64_t total;         /* records added */
    FILE *file;             /* the runs, one after another; NULL: none written */
    uint64_t *run_start;    /* each run's first record, in records */
    size_t nruns, capruns;
    int failed;             /* out of memory, or the temporary file could not be written */
    int keyed;              /* records are struct gt_xs_keyed: sorted by radix */
    /* reading (gt_xs_begin): the runs, a heap of them by their current record */
    int reading, pending;
    size_t at;              /* all in the buffer: the next record */
    struct gt_xs_run *runs;
    size_t *heap;
    size_t nheap, nrunsread;
};

/* An empty sort of `size`-byte records in at most about `mem` bytes,
 * ordered by cmp(a, b, cmp_arg). */
void gt_xs_init(struct gt_extsort *s, size_t size, gt_xs_cmp cmp, void *cmp_arg, size_t mem);
/* Adds a record; on failure the sort is marked failed and later calls do nothing. */
void gt_xs_add(struct gt_extsort *s, const void *rec);
/* The most common record: a value under a key (a kernel's duration, a
 * site's host time), by key then value; sorted by radix in the buffer,
 * which is cheaper than qsort's comparisons. */
struct gt_xs_keyed {
    uint32_t key, pad;
    uint64_t value;
};
int gt_xs_keyed_cmp(const void *a, const void *b, void *arg);
void gt_xs_init_keyed(struct gt_extsort *s, size_t mem);

/* Reading in order, one record at a time: gt_xs_begin once (0; -1 when
 * failed), then gt_xs_next until it returns NULL (the end, or a failure:
 * see `failed`). A record handed out stays valid until the next call. No
 * record may be added once reading has begun. */
int gt_xs_begin(struct gt_extsort *s);
const void *gt_xs_next(struct gt_extsort *s);
/* fn(record, arg) for every record, in order; fn returning non-zero stops
 * the reading (and this returns it). Frees the records: a sort is read
 * once. 0; -1 when failed (out of memory or a file error). */
int gt_xs_each(struct gt_extsort *s, int (*fn)(const void *rec, void *arg), void *arg);
void gt_xs_free(struct gt_extsort *s);

#endif
