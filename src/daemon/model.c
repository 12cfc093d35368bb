/* model.c — the model's look-ups: a container by id, name or the core's cid, and what the
 * containers and processes use now, read from their ledger slots (bounded by what the daemon
 * granted: slot.c). Reads only, except the one fact a reading leaves behind: the highest use a
 * container's record has seen (its peak, which its profile records at its end). Below every
 * service: nothing here calls the core, a socket, or another file of the daemon but slot.c. */
#include <string.h>

#include "daemon.h"

struct container *container_find(struct daemon *d, const char *key)
{
    for (struct container *c = d->containers; c; c = c->next)
        if (strcmp(c->ident.id, key) == 0)
            return c->gang.leader ? c->gang.leader : c; /* a gang member's id names its gang */
    for (struct container *c = d->containers; c; c = c->next)
        if (c->ident.name[0] && strcmp(c->ident.name, key) == 0)
            return c;
    return NULL;
}

struct container *container_by_cid(struct daemon *d, cg_cid cid)
{
    for (struct container *c = d->containers; c; c = c->next)
        if (c->cid == cid)
            return c;
    return NULL;
}

uint64_t proc_used_bytes(struct proc *p)
{
    if (!p->welcomed)
        return 0;
    return slot_used_pages(p->c, p->slot) * CG_LEDGER_PAGE;
}

uint64_t container_used_bytes(struct container *c)
{
    /* A paused container's processes hold nothing on the device; their slots keep what they
     * have on the host (pause.h). */
    if (c->pause.phase == PAUSE_PAUSED)
        return 0;
    uint64_t pages = 0;
    uint32_t high = c->rec->high < CG_LEDGER_SLOTS ? c->rec->high : CG_LEDGER_SLOTS;
    for (uint32_t i = 0; i < high; i++)
        if (c->rec->slots[i].pid)
            pages += slot_used_pages(c, i);
    /* Every reading may be its peak, which its profile records at its end (profile.h). */
    if (pages * CG_LEDGER_PAGE > c->rec->peak)
        c->rec->peak = pages * CG_LEDGER_PAGE;
    return pages * CG_LEDGER_PAGE;
}

uint64_t device_used_bytes(struct daemon *d, unsigned device)
{
    uint64_t used = 0;
    for (struct container *c = d->containers; c; c = c->next)
        if (c->device == device)
            used += container_used_bytes(c);
    return used;
}
