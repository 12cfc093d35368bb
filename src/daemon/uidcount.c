/* uidcount.c — counters per user. A flat array searched linearly: the users holding
 * connections at once are few (each holds at least one of a bounded number of connections), and
 * a flat array has no allocation on the common path of a user that already holds one. */
#include "uidcount.h"

#include <stdlib.h>

struct uid_count *uidcount_get(const struct uid_counts *m, uid_t uid)
{
    for (unsigned i = 0; i < m->len; i++)
        if (m->v[i].uid == uid)
            return &m->v[i];
    return NULL;
}

static unsigned clamp_add(unsigned v, int d)
{
    if (d < 0 && (unsigned)-d > v)
        return 0;
    return v + (unsigned)d;
}

int uidcount_add(struct uid_counts *m, uid_t uid, int dn, int daux)
{
    struct uid_count *e = uidcount_get(m, uid);
    if (!e) {
        if (dn <= 0 && daux <= 0)
            return 0;
        if (m->len == m->cap) {
            unsigned ncap = m->cap ? m->cap * 2 : 16;
            struct uid_count *nv = realloc(m->v, ncap * sizeof *nv);
            if (!nv)
                return -1;
            m->v = nv;
            m->cap = ncap;
        }
        e = &m->v[m->len++];
        *e = (struct uid_count){.uid = uid};
    }
    e->n = clamp_add(e->n, dn);
    e->aux = clamp_add(e->aux, daux);
    if (e->n == 0 && e->aux == 0)
        *e = m->v[--m->len];
    return 0;
}

struct uid_count *uidcount_heaviest(const struct uid_counts *m, uid_t except)
{
    struct uid_count *best = NULL;
    for (unsigned i = 0; i < m->len; i++)
        if (m->v[i].uid != except && (!best || m->v[i].n > best->n))
            best = &m->v[i];
    return best;
}

void uidcount_free(struct uid_counts *m)
{
    free(m->v);
    *m = (struct uid_counts){0};
}
