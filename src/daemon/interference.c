/* interference.c — the interference matrix in memory (interference.h). */
#include "interference.h"

#include <stdlib.h>
#include <string.h>

#include "daemon.h"
#include "log.h"
#include "profile.h"
#include "store.h"

struct pair_slowdown {
    uint64_t fg, bg;
    uint32_t milli;
};

struct interference_cache {
    struct pair_slowdown *e;
    size_t n, cap;
};

static int cmp(const void *a, const void *b)
{
    const struct pair_slowdown *x = a, *y = b;
    if (x->fg != y->fg)
        return x->fg < y->fg ? -1 : 1;
    return x->bg < y->bg ? -1 : x->bg > y->bg;
}

static int add_row(void *ctx, const char *tenant, const struct interference_row *r)
{
    (void)tenant;
    struct interference_cache *t = ctx;
    if (t->n == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 64;
        struct pair_slowdown *e = realloc(t->e, cap * sizeof *e);
        if (!e)
            return -1;
        t->e = e;
        t->cap = cap;
    }
    double m = r->slowdown * 1000.0 + 0.5;
    t->e[t->n++] = (struct pair_slowdown){profile_app_hash(r->foreground),
                                          profile_app_hash(r->background),
                                          m >= 4e9 ? 4000000000u : (uint32_t)m};
    return 0;
}

int interference_reload(struct daemon *d)
{
    struct interference_cache fresh = {0};
    if (!d->store || store_interference_each(d->store, NULL, add_row, &fresh) != 0) {
        free(fresh.e);
        log_warn("interference: the stored matrix could not be read; placement keeps the one "
                 "it had");
        return -1;
    }
    if (fresh.n) /* an empty matrix has no array: qsort's base must not be NULL */
        qsort(fresh.e, fresh.n, sizeof *fresh.e, cmp);
    /* One entry per pair: the worst any tenant measured. */
    size_t w = 0;
    for (size_t i = 0; i < fresh.n; i++) {
        if (w && fresh.e[w - 1].fg == fresh.e[i].fg && fresh.e[w - 1].bg == fresh.e[i].bg) {
            if (fresh.e[i].milli > fresh.e[w - 1].milli)
                fresh.e[w - 1].milli = fresh.e[i].milli;
            continue;
        }
        fresh.e[w++] = fresh.e[i];
    }
    fresh.n = w;
    if (!d->interference && !(d->interference = calloc(1, sizeof *d->interference))) {
        free(fresh.e);
        return -1;
    }
    free(d->interference->e);
    *d->interference = fresh;
    return 0;
}

uint32_t interference_slowdown(void *ctx, uint64_t fg, uint64_t bg)
{
    const struct daemon *d = ctx;
    const struct interference_cache *t = d->interference;
    if (!t || t->n == 0)
        return 0;
    struct pair_slowdown key = {fg, bg, 0};
    const struct pair_slowdown *hit = bsearch(&key, t->e, t->n, sizeof *t->e, cmp);
    return hit ? hit->milli : 0;
}

void interference_free(struct daemon *d)
{
    if (d->interference)
        free(d->interference->e);
    free(d->interference);
    d->interference = NULL;
}
