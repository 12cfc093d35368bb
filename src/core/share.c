/* share.c — a container's compute share as the core keeps it: its vocabulary (modes, whole
 * percentages), admission, and the per-device sum of hard shares that admission and placement
 * read.
 *
 * Follow one share: `convgpu run --gpu-compute 30 --compute-mode hard` reaches the daemon, which
 * creates the container with cg_container_create_spec: placement (device < 0) only considers
 * devices with 30% of hard share left, and the core adds 30 to that device's hard_pct. Later,
 * `convgpu set --gpu-compute 50` is cg_container_set_compute: admitted when the other hard
 * shares leave 50, else CG_ERR_NO_COMPUTE with nothing changed. Removal gives the share back.
 * What the share means on the device (budgets, throttling) is computed elsewhere from what is
 * kept here; this file only decides who may hold which share.
 *
 * Invariant (checked by cg_core_check): for every device, hard_pct = sum of the hard shares of
 * its containers <= 100, and every share is 0..100 with no share meaning ELASTIC.
 */
#include <string.h>

#include "internal.h"

const char *cg_compute_mode_name(cg_compute_mode m)
{
    switch (m) {
    case CG_COMPUTE_ELASTIC: return "elastic";
    case CG_COMPUTE_HARD: return "hard";
    case CG_COMPUTE__COUNT: break;
    }
    return "unknown";
}

bool cg_compute_mode_parse(const char *name, cg_compute_mode *out)
{
    if (!name)
        return false;
    if (strcmp(name, "elastic") == 0)
        *out = CG_COMPUTE_ELASTIC;
    else if (strcmp(name, "hard") == 0)
        *out = CG_COMPUTE_HARD;
    else
        return false;
    return true;
}

bool cg_compute_pct_parse(const char *text, unsigned *out)
{
    return cg_pct_parse(text, CG_COMPUTE_PCT_MAX, out);
}

bool cg_pct_parse(const char *text, unsigned max, unsigned *out)
{
    if (!text)
        return false;
    unsigned v = 0;
    size_t n = 0;
    for (; text[n] >= '0' && text[n] <= '9'; n++) {
        v = v * 10 + (unsigned)(text[n] - '0');
        if (v > max)
            return false;      /* also bounds the loop's arithmetic */
    }
    if (n == 0 || (text[n] == '%' ? text[n + 1] != '\0' : text[n] != '\0') || v == 0)
        return false;
    *out = v;
    return true;
}

static void emit_compute(cg_core *core, const cg_container *c, cg_time now)
{
    if (!core->cfg.sink)
        return;
    cg_event ev = {.kind = CG_EV_COMPUTE, .cid = c->cid, .device = c->dev,
                   .compute_pct = c->compute_pct, .compute_mode = c->compute_mode, .now = now};
    core->cfg.sink(core->cfg.sink_ctx, &ev);
}

void cg_share_set(cg_core *core, cg_container *c, unsigned pct, cg_compute_mode mode, cg_time now)
{
    if (pct == 0)
        mode = CG_COMPUTE_ELASTIC;
    if (pct == c->compute_pct && mode == c->compute_mode)
        return;
    cg_device *d = &core->dev[c->dev];
    d->hard_pct -= ctr_hard(c);
    c->compute_pct = pct;
    c->compute_mode = mode;
    d->hard_pct += ctr_hard(c);
    emit_compute(core, c, now);
}

void cg_share_detach(cg_core *core, cg_container *c)
{
    core->dev[c->dev].hard_pct -= ctr_hard(c);
    c->compute_pct = 0;
    c->compute_mode = CG_COMPUTE_ELASTIC;
}

cg_status cg_container_compute_check(const cg_core *core, cg_cid cid, unsigned pct,
                                     cg_compute_mode mode)
{
    const cg_container *c = cid == CG_CID_NONE ? NULL : cg_hash_get(&core->by_cid, cid, 0);
    if (!c)
        return CG_ERR_NOT_FOUND;
    if (!share_valid(pct, mode))
        return CG_ERR_INVALID;
    const cg_device *d = &core->dev[c->dev];
    unsigned others = d->hard_pct - ctr_hard(c);
    unsigned hard = mode == CG_COMPUTE_HARD ? pct : 0;
    return hard <= CG_COMPUTE_PCT_MAX - others ? CG_OK : CG_ERR_NO_COMPUTE;
}

cg_status cg_container_set_compute(cg_core *core, cg_cid cid, unsigned pct, cg_compute_mode mode,
                                   cg_time now)
{
    cg_status st = cg_container_compute_check(core, cid, pct, mode);
    if (st != CG_OK)
        return st;
    cg_share_set(core, cg_hash_get(&core->by_cid, cid, 0), pct, mode, now);
    return CG_OK;
}
