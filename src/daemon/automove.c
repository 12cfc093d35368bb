/* automove.c — one move to make room for a waiting container, within --auto-move N moves a
 * minute (automove.h). */
#include "automove.h"

#include <stdlib.h>
#include <string.h>

#include "daemon.h"
#include "log.h"
#include "loop.h"
#include "notice.h"
#include "pause.h"
#include "size.h"
#include "swap.h"

/* Moves started in the last minute (the bound's window). */
static unsigned moves_in_window(struct daemon *d, uint64_t now)
{
    unsigned n = 0;
    for (unsigned i = 0; i < AUTOMOVE_RING; i++)
        if (d->automove_at[i] && now - d->automove_at[i] < AUTOMOVE_WINDOW_NS)
            n++;
    return n;
}

static bool busy(const struct daemon *d)
{
    for (const struct container *c = d->containers; c; c = c->next)
        if (c->pause.phase != PAUSE_NONE || c->pause.busy)
            return true;
    return false;
}

static bool on_one_gpu(const struct container *c)
{
    return c->gang.nmembers <= 1 && !c->gang.leader;
}

/* What the waiting container w still needs on its GPU beyond its assignment; 0 when none. */
static uint64_t need_of(const cg_container_info *ci)
{
    if (ci->npending == 0)
        return 0;
    uint64_t want = ci->used + ci->pending_bytes;
    return want > ci->assigned ? want - ci->assigned : 0;
}

/* Looks for one move for w; 0 when one started. */
static int try_for(struct daemon *d, struct container *w, uint64_t need, unsigned left)
{
    cg_defrag_device devs[CG_MAX_DEVICES];
    unsigned ndev = d->ndevices < CG_MAX_DEVICES ? d->ndevices : CG_MAX_DEVICES;
    for (unsigned i = 0; i < ndev; i++) {
        cg_device_info di = {0};
        cg_device_get(d->core, i, &di);
        uint32_t model = i;
        for (unsigned j = 0; j < i; j++)
            if (strcmp(d->devices[j].name, d->devices[i].name) == 0 &&
                d->devices[j].total == d->devices[i].total) {
                model = j;
                break;
            }
        devs[i] = (cg_defrag_device){.model = model, .free = di.free};
    }
    size_t nc = 0;
    for (const struct container *c = d->containers; c; c = c->next)
        nc++;
    cg_defrag_container *cs = calloc(nc ? nc : 1, sizeof *cs);
    struct container **who = calloc(nc ? nc : 1, sizeof *who);
    if (!cs || !who) {
        free(cs);
        free(who);
        return -1;
    }
    size_t k = 0;
    uint64_t now = loop_now_ns();
    for (struct container *c = d->containers; c; c = c->next) {
        cg_container_info ci = {0};
        if (c == w || cg_container_get(d->core, c->cid, now, &ci) != CG_OK)
            continue;
        bool movable = on_one_gpu(c) && !ci.exclusive &&
                       !ci.swap_held && ci.swapped == 0 && ci.npending == 0 &&
                       c->swap.phase == SWAP_RESIDENT && c->pause.phase == PAUSE_NONE;
        cs[k] = (cg_defrag_container){.device = c->device, .holds = ci.assigned,
                                      .movable = movable};
        who[k++] = c;
    }
    cg_defrag_move m = cg_defrag_pick_on(devs, ndev, cs, k, need, w->device, left);
    int rc = -1;
    if (m.found) {
        struct container *c = who[m.container];
        char err[256], b1[CG_SIZE_BUFLEN], b2[CG_SIZE_BUFLEN];
        if (pause_move_request(d, c, (int)m.to, err, sizeof err) == 0) {
            log_info("auto-move: container %s moves from device %u to device %u (%s) so that "
                     "container %s's %s fit on device %u (--auto-move %u a minute)",
                     c->ident.id, m.from, m.to, cg_format_size(m.moves, b1, sizeof b1),
                     w->ident.id, cg_format_size(need, b2, sizeof b2), m.from, d->opt.auto_move);
            notice_finding(d, "auto-move", c, 0, m.moves);
            rc = 0;
        } else {
            log_warn("auto-move: container %s could not move to device %u: %s", c->ident.id,
                     m.to, err);
        }
    }
    free(cs);
    free(who);
    return rc;
}

int automove_tick(struct daemon *d)
{
    if (!d->opt.auto_move)
        return -1;
    uint64_t now = loop_now_ns();
    if (now < d->automove_due)
        return (int)((d->automove_due - now) / 1000000u) + 1;
    d->automove_due = now + (uint64_t)AUTOMOVE_PERIOD_MS * 1000000u;
    unsigned used = moves_in_window(d, now);
    if (used >= d->opt.auto_move || busy(d))
        return AUTOMOVE_PERIOD_MS;
    for (struct container *w = d->containers; w; w = w->next) {
        cg_container_info ci = {0};
        if (!on_one_gpu(w) || w->pause.phase != PAUSE_NONE ||
            cg_container_get(d->core, w->cid, now, &ci) != CG_OK)
            continue;
        uint64_t need = need_of(&ci);
        if (need && try_for(d, w, need, d->opt.auto_move - used) == 0) {
            d->automove_at[d->automove_next++ % AUTOMOVE_RING] = now;
            break;
        }
    }
    return AUTOMOVE_PERIOD_MS;
}
