/* pending.c — the requests a container's processes are waiting on: every ALLOC the core has not
 * answered yet (suspended, or being decided right now).
 *
 * One request's path: decide_alloc adds it (pending_add) before it asks the core; the core's
 * decision event names it by request id and the sink takes it out (pending_take) to answer it,
 * now or much later; a process that exits or a container that goes drops what is left.
 *
 * Everything a message does here costs the same however much a tenant has queued: requests are
 * found by id through an open-addressing table, each process keeps its own list and count, and
 * the container keeps its count. The container's list keeps arrival order for the control API.
 * Nothing here talks to the core, a socket or the log.
 */
#include <stdlib.h>

#include "daemon.h"

/* Request ids come from the daemon's counter, so their low bits are as good as a hash; the
 * multiplication only spreads ids that were issued in strides. */
static size_t slot_of(uint64_t req, size_t cap)
{
    return (size_t)((req * 0x9e3779b97f4a7c15ull) >> 32) & (cap - 1);
}

/* Room for one more entry at a load of at most 3/4; false when memory is short. */
static bool index_reserve(struct pending_index *ix)
{
    if ((ix->len + 1) * 4 <= ix->cap * 3)
        return true;
    size_t ncap = ix->cap ? ix->cap * 2 : 16;
    struct pending **n = calloc(ncap, sizeof *n);
    if (!n)
        return false;
    for (size_t i = 0; i < ix->cap; i++) {
        struct pending *r = ix->slots[i];
        if (!r)
            continue;
        size_t j = slot_of(r->req, ncap);
        while (n[j])
            j = (j + 1) & (ncap - 1);
        n[j] = r;
    }
    free(ix->slots);
    ix->slots = n;
    ix->cap = ncap;
    return true;
}

static size_t index_find(const struct pending_index *ix, uint64_t req)
{
    if (!ix->cap)
        return SIZE_MAX;
    for (size_t i = slot_of(req, ix->cap);; i = (i + 1) & (ix->cap - 1)) {
        if (!ix->slots[i])
            return SIZE_MAX;
        if (ix->slots[i]->req == req)
            return i;
    }
}

/* Removes slot i and moves later entries of its probe run back, so lookups need no tombstones. */
static void index_remove(struct pending_index *ix, size_t i)
{
    size_t mask = ix->cap - 1;
    ix->slots[i] = NULL;
    ix->len--;
    for (size_t j = (i + 1) & mask; ix->slots[j]; j = (j + 1) & mask) {
        size_t home = slot_of(ix->slots[j]->req, ix->cap);
        /* Entry j may move to the hole at i when its home is not inside (i, j], cyclically. */
        if ((j > i && (home <= i || home > j)) || (j < i && home <= i && home > j)) {
            ix->slots[i] = ix->slots[j];
            ix->slots[j] = NULL;
            i = j;
        }
    }
    if (ix->len == 0 && ix->cap > 64) {
        /* A flood is over: do not keep its table. */
        free(ix->slots);
        ix->slots = NULL;
        ix->cap = 0;
    }
}

struct pending *pending_add(struct container *c, struct proc *p, uint64_t req, uint64_t msg_id,
                            uint64_t bytes, uint64_t since)
{
    if (index_find(&c->pending.by_req, req) != SIZE_MAX || !index_reserve(&c->pending.by_req))
        return NULL;
    struct pending *r = calloc(1, sizeof *r);
    if (!r)
        return NULL;
    *r = (struct pending){.req = req, .msg_id = msg_id, .bytes = bytes, .since = since, .proc = p};
    r->prev = c->pending.tail;
    if (c->pending.tail)
        c->pending.tail->next = r;
    else
        c->pending.head = r;
    c->pending.tail = r;
    r->proc_next = p->pending;
    if (p->pending)
        p->pending->proc_prev = r;
    p->pending = r;
    c->pending.n++;
    p->npending++;
    struct pending_index *ix = &c->pending.by_req;
    size_t i = slot_of(req, ix->cap);
    while (ix->slots[i])
        i = (i + 1) & (ix->cap - 1);
    ix->slots[i] = r;
    ix->len++;
    return r;
}

struct pending *pending_find(struct container *c, uint64_t req)
{
    size_t i = index_find(&c->pending.by_req, req);
    return i == SIZE_MAX ? NULL : c->pending.by_req.slots[i];
}

static void unlink_one(struct container *c, struct pending *r)
{
    if (r->prev)
        r->prev->next = r->next;
    else
        c->pending.head = r->next;
    if (r->next)
        r->next->prev = r->prev;
    else
        c->pending.tail = r->prev;
    struct proc *p = r->proc;
    if (r->proc_prev)
        r->proc_prev->proc_next = r->proc_next;
    else
        p->pending = r->proc_next;
    if (r->proc_next)
        r->proc_next->proc_prev = r->proc_prev;
    p->npending--;
    c->pending.n--;
    r->prev = r->next = r->proc_prev = r->proc_next = NULL;
}

struct pending *pending_take(struct container *c, uint64_t req)
{
    size_t i = index_find(&c->pending.by_req, req);
    if (i == SIZE_MAX)
        return NULL;
    struct pending *r = c->pending.by_req.slots[i];
    index_remove(&c->pending.by_req, i);
    unlink_one(c, r);
    return r;
}

void pending_drop_proc(struct proc *p)
{
    while (p->pending)
        free(pending_take(p->c, p->pending->req));
}

void pending_drop_all(struct container *c)
{
    while (c->pending.head)
        free(pending_take(c, c->pending.head->req));
    free(c->pending.by_req.slots);
    c->pending.by_req = (struct pending_index){0};
}
