/* fk_effects.c: the bytes that copies move and memsets write. Device
 * memory is host memory here, so a copy is a memmove; done on the calling
 * thread, a 64 MiB "async" copy from pinned memory would hold the host for
 * the memmove and page faults (hundreds of ms), where the real driver
 * returns once the copy is queued. So effects go to one driver thread that
 * makes them in the order they were posted; whoever must see them made (a
 * blocking copy, a sync, a free, a host function) waits for its ticket.
 * Small effects with nothing queued ahead are made inline: cheaper than a
 * thread switch, and still in order. */
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "fk_driver.h"

#define FK_INLINE_BYTES (64u << 10)

static pthread_mutex_t fk_fx_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t fk_fx_work = PTHREAD_COND_INITIALIZER;
static pthread_cond_t fk_fx_made = PTHREAD_COND_INITIALIZER;
static struct fk_node *fk_fx_ring;
static size_t fk_fx_cap, fk_fx_head, fk_fx_len;
static uint64_t fk_fx_posted, fk_fx_done; /* tickets: posted so far, made so far */
static int fk_fx_started, fk_fx_making;

static void fk_fill(const struct fk_node *n)
{
    size_t stride = n->rows > 1 || n->pitch ? n->pitch : n->n * n->esz;
    for (size_t y = 0; y < n->rows; y++) {
        char *row = (char *)n->dst + y * stride;
        if (n->esz == 1) {
            memset(row, (int)(n->value & 0xff), n->n);
            continue;
        }
        for (size_t i = 0; i < n->n; i++) {
            if (n->esz == 2)
                memcpy(row + 2 * i, &(uint16_t){(uint16_t)n->value}, 2);
            else
                memcpy(row + 4 * i, &(uint32_t){n->value}, 4);
        }
    }
}

static void fk_make(const struct fk_node *n)
{
    if (n->kind == FAKECUDA_ACT_MEMSET) {
        fk_fill(n);
        return;
    }
    if (n->kind != FAKECUDA_ACT_MEMCPY || !n->bytes)
        return;
    if (!n->width) {
        memmove(n->dst, n->src, n->bytes);
        return;
    }
    size_t sh = n->sheight ? n->sheight : n->height, dh = n->dheight ? n->dheight : n->height;
    for (size_t z = 0; z < n->depth; z++)
        for (size_t y = 0; y < n->height; y++)
            memmove((char *)n->dst + (z * dh + y) * n->dpitch, (const char *)n->src + (z * sh + y) * n->spitch,
                    n->width);
}

/* One maker at a time keeps the effects in order: the driver thread, or a
 * thread waiting for an effect, which makes the next ones itself rather
 * than wait for the driver thread to be scheduled (on a loaded machine
 * that can take milliseconds, which a sync would then add to the GPU's
 * times). Lock held; unlocks while making. */
static int fk_fx_make_next_locked(void)
{
    if (!fk_fx_len || fk_fx_making)
        return 0;
    struct fk_node n = fk_fx_ring[fk_fx_head];
    fk_fx_making = 1;
    pthread_mutex_unlock(&fk_fx_lock);
    fk_make(&n);
    pthread_mutex_lock(&fk_fx_lock);
    fk_fx_head = (fk_fx_head + 1) % fk_fx_cap;
    fk_fx_len--;
    fk_fx_done++;
    fk_fx_making = 0;
    pthread_cond_broadcast(&fk_fx_made);
    pthread_cond_signal(&fk_fx_work);
    return 1;
}

static void *fk_fx_thread(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&fk_fx_lock);
    for (;;)
        if (!fk_fx_make_next_locked())
            pthread_cond_wait(&fk_fx_work, &fk_fx_lock);
    return NULL;
}

static int fk_fx_start_locked(void)
{
    if (fk_fx_started)
        return 1;
    pthread_t t;
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int ok = pthread_create(&t, NULL, fk_fx_thread, NULL) == 0;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (ok) {
        pthread_detach(t);
        fk_fx_started = 1;
    }
    return ok;
}

static int fk_fx_grow_locked(void)
{
    size_t cap = fk_fx_cap ? fk_fx_cap * 2 : 256;
    struct fk_node *r = malloc(cap * sizeof(*r));
    if (!r)
        return 0;
    for (size_t i = 0; i < fk_fx_len; i++)
        r[i] = fk_fx_ring[(fk_fx_head + i) % fk_fx_cap];
    free(fk_fx_ring);
    fk_fx_ring = r;
    fk_fx_cap = cap;
    fk_fx_head = 0;
    return 1;
}

uint64_t fk_effect_post(const struct fk_node *n)
{
    pthread_mutex_lock(&fk_fx_lock);
    uint64_t ticket = ++fk_fx_posted;
    int queued = 0;
    if (n->bytes > FK_INLINE_BYTES || fk_fx_len || fk_fx_making) {
        if ((fk_fx_len < fk_fx_cap || fk_fx_grow_locked()) && fk_fx_start_locked()) {
            fk_fx_ring[(fk_fx_head + fk_fx_len) % fk_fx_cap] = *n;
            fk_fx_len++;
            queued = 1;
            pthread_cond_signal(&fk_fx_work);
        } else {
            /* no room or no thread: made here, after those ahead of it */
            while (fk_fx_done + 1 < ticket)
                if (!fk_fx_make_next_locked())
                    pthread_cond_wait(&fk_fx_made, &fk_fx_lock);
        }
    }
    if (!queued) {
        fk_make(n);
        fk_fx_done++;
        pthread_cond_broadcast(&fk_fx_made);
    }
    pthread_mutex_unlock(&fk_fx_lock);
    return ticket;
}

void fk_effect_wait(uint64_t ticket)
{
    pthread_mutex_lock(&fk_fx_lock);
    while (fk_fx_done < ticket)
        if (!fk_fx_make_next_locked())
            pthread_cond_wait(&fk_fx_made, &fk_fx_lock);
    pthread_mutex_unlock(&fk_fx_lock);
}

/* Started with the driver, so that the first async copy does not pay for
 * creating it. */
void fk_effects_start(void)
{
    pthread_mutex_lock(&fk_fx_lock);
    fk_fx_start_locked();
    pthread_mutex_unlock(&fk_fx_lock);
}

uint64_t fk_effect_last(void)
{
    pthread_mutex_lock(&fk_fx_lock);
    uint64_t t = fk_fx_posted;
    pthread_mutex_unlock(&fk_fx_lock);
    return t;
}

int fk_effect_done(uint64_t ticket)
{
    pthread_mutex_lock(&fk_fx_lock);
    int done = fk_fx_done >= ticket;
    pthread_mutex_unlock(&fk_fx_lock);
    return done;
}
