/* internal.h — the core's private data structures, shared by the files of src/core only.
 *
 * Everything a container needs lives in one struct with intrusive links, so that creating a
 * container is one allocation and removing it touches only its neighbours. Lookups by id go
 * through the pair-keyed hash in hash.h; the per-device safety index lives in safety.h.
 */
#ifndef CONVGPU_CORE_INTERNAL_H
#define CONVGPU_CORE_INTERNAL_H

#include "core.h"
#include "hash.h"

typedef struct cg_container cg_container;
typedef struct cg_process cg_process;
typedef struct cg_pending cg_pending;

/* A suspended allocation request, in its container's queue (waitq.h). */
struct cg_pending {
    cg_reqid req;
    cg_bytes bytes;              /* size asked for + context charge when `charges` */
    bool charges;                /* this request carries its process's first context charge */
    cg_process *proc;
    uint64_t seq;                /* arrival number in its container */
    cg_pending *prev, *next;     /* the container's queue, arrival order */
    cg_pending *pprev, *pnext;   /* its process's requests, arrival order */
    cg_pending *tl, *tr;         /* index node (waitq.c): a treap keyed by seq */
    uint64_t prio;
    cg_bytes tmin, tmax;         /* least and greatest size in the subtree */
};

struct cg_process {
    cg_pid pid;
    cg_bytes used;               /* includes the context charge once charged */
    unsigned npending;
    bool charged;                /* context charge taken */
    bool charge_pending;         /* a pending request carries the charge */
    cg_pending *phead, *ptail;   /* its pending requests, arrival order */
    cg_process *prev, *next;     /* the container's processes */
};

struct cg_container {
    cg_cid cid;
    unsigned dev;
    cg_bytes limit, assigned, used;
    cg_bytes limit_waiting;      /* target of a waiting raise; 0 when none */
    unsigned compute_pct;        /* 0 = no compute limit, else 1..100 (share.c) */
    cg_compute_mode compute_mode;/* ELASTIC when compute_pct is 0 */
    uint32_t tenant;
    cg_bytes fair_share, fair_ceiling; /* its tenant's on its device (fairshare.c) */
    cg_time created_at, suspended_since, total_suspended;
    unsigned nprocs, npending;
    cg_bytes pending_bytes;
    uint64_t pass;               /* resume pass that last considered it */
    cg_container *prev, *next;   /* all containers, creation order */
    cg_container *sprev, *snext; /* device's suspended containers, suspension order */
    cg_container *wprev, *wnext; /* device's containers with a waiting limit raise */
    cg_process *procs;
    cg_pending *phead, *ptail;   /* pending requests, arrival order (waitq.h) */
    cg_pending *proot;           /* their index */
    uint64_t pseq;               /* arrival numbers handed out */
    /* Safety index node (safety.c): a treap keyed by (need, cid). */
    cg_container *tl, *tr;
    uint64_t prio;
    cg_bytes tneed, tassigned;   /* the values the node was inserted with */
    int64_t tsum;                /* sum of assignments in the subtree */
    int64_t tmax;                /* max over the subtree of need - assignments before it */
};

typedef struct {
    cg_bytes total, reserve, capacity, context_charge;
    cg_bytes assigned, used;
    unsigned ncontainers, nsuspended;
    unsigned hard_pct;                    /* sum of its containers' hard shares, <= 100 */
    cg_container *root;                   /* safety index */
    cg_container *shead, *stail;          /* suspended, suspension order */
    cg_container *whead, *wtail;          /* waiting limit raises, arrival order */
} cg_device;

/* A resume policy picks, among the device's suspended containers not yet considered in this
 * pass (c->pass != pass), the one to offer memory to next; NULL when none is left. */
struct cg_resume_ops {
    const char *name;
    cg_container *(*pick)(cg_core *core, cg_device *dev, cg_bytes free, uint64_t pass,
                          cg_time now);
};

/* A placement policy picks a device index for a new container of `limit` bytes and a hard
 * share of `hard` percent (0 for an elastic share or none) among the devices that fit it
 * (dev_fits); -1 when none does (the core then falls back). Policies that compare devices
 * compare their room (dev_room), which weighs compute as well as memory. */
struct cg_place_ops {
    const char *name;
    int (*pick)(const cg_core *core, cg_bytes limit, unsigned hard);
};

struct cg_core {
    cg_config cfg;
    const struct cg_resume_ops *resume;
    const struct cg_place_ops *place;
    cg_device dev[CG_MAX_DEVICES];
    unsigned ndev;
    cg_cid next_cid;
    uint64_t pass;
    uint64_t rng;                         /* splitmix64 state for the random policy */
    cg_container *head, *tail;            /* creation order */
    unsigned ncontainers;
    cg_hash by_cid, by_pid, by_req;
    size_t bytes_held;                    /* what the core has allocated, for the footprint */
    cg_fair_mode fair;
    cg_hash by_tenant;                    /* (tenant, 0) -> cg_tenant, for those with a record */
    struct cg_fair_claim *fair_buf;       /* scratch for the ceilings, >= ncontainers entries */
    size_t fair_cap;
};

static inline cg_bytes dev_free(const cg_device *d) { return d->capacity - d->assigned; }
static inline cg_bytes ctr_need(const cg_container *c) { return c->limit - c->assigned; }

/* ---- compute shares (share.c) ---- */

/* The part of a container's share admitted against its device: its share when hard. */
static inline unsigned ctr_hard(const cg_container *c)
{
    return c->compute_mode == CG_COMPUTE_HARD ? c->compute_pct : 0;
}

/* Whether a hard share of `hard` percent fits beside the device's others. */
static inline bool dev_admits(const cg_device *d, unsigned hard)
{
    return hard <= CG_COMPUTE_PCT_MAX - d->hard_pct;
}

/* Whether a new container (limit, hard share) fits on the device right now. */
static inline bool dev_fits(const cg_device *d, cg_bytes limit, unsigned hard)
{
    return dev_free(d) >= limit && dev_admits(d, hard);
}

/* A device's room for placement: the smaller of its free memory and its capacity scaled by the
 * hard share left, so a device whose time is promised away looks as full as one whose memory
 * is. Without hard shares it is the free memory, so placement is what it was before shares. */
static inline cg_bytes dev_room(const cg_device *d)
{
    unsigned left = CG_COMPUTE_PCT_MAX - d->hard_pct;
    cg_bytes time_room = d->capacity / 100 * left + d->capacity % 100 * left / 100;
    return dev_free(d) < time_room ? dev_free(d) : time_room;
}

/* Takes the container's share (validated, admitted) onto its device and emits COMPUTE when it
 * changed; cg_share_detach takes it off without an event (removal). */
void cg_share_set(cg_core *core, cg_container *c, unsigned pct, cg_compute_mode mode,
                  cg_time now);
void cg_share_detach(cg_core *core, cg_container *c);
/* Whether (pct, mode) is a valid share: pct <= 100 and a known mode. */
static inline bool share_valid(unsigned pct, cg_compute_mode mode)
{
    return pct <= CG_COMPUTE_PCT_MAX && (unsigned)mode <= (unsigned)CG_COMPUTE_HARD;
}

/* ---- tenants and fair share (fairshare.c) ---- */

/* A tenant with a weight other than 1 or a profile. */
typedef struct {
    uint32_t id;
    unsigned weight;
    cg_tenant_profile profile;     /* runs == 0: none */
} cg_tenant;

/* One container as the ceiling computations see it. */
struct cg_fair_claim {
    uint32_t tenant;
    cg_bytes need, assigned, limit;
    cg_bytes share, ceiling;       /* outputs of the ceiling computation */
    cg_container *c;
};

static inline bool cg_fair_on(const cg_core *core) { return core->fair != CG_FAIR_NONE; }
/* Room for the scratch of `n` containers; false (nothing changed) when memory is short. Only
 * needed with fair share on; creation calls it before changing anything. */
bool cg_fair_reserve(cg_core *core, size_t n);
/* Recomputes the share and ceiling of every tenant on the device (after its container set,
 * a limit, a weight, the mode or the profiles changed). No-op in mode none. */
void cg_fair_recompute(cg_core *core, unsigned dev);
/* The largest g <= want that container c may be given without breaking its tenant's safety
 * under its ceiling; `want` itself in mode none. */
cg_bytes cg_fair_cap(cg_core *core, const cg_container *c, cg_bytes want);
/* What the ceiling of `tenant` on `dev` must be, recomputed from scratch into `buf` (room for
 * every container): the oracle of cg_core_check. `share_out` gets the fair share. */
cg_bytes cg_fair_ceiling_of(const cg_core *core, uint32_t tenant, unsigned dev,
                            struct cg_fair_claim *buf, cg_bytes *share_out);
/* The least total of assignments that lets the tenant's containers on `dev` finish in the safe
 * order, with container x (may be NULL) given `gift` more; into `buf`. */
cg_bytes cg_fair_floor(const cg_core *core, uint32_t tenant, unsigned dev, const cg_container *x,
                       cg_bytes gift, struct cg_fair_claim *buf);
/* Frees the tenant records and the scratch (cg_core_free). */
void cg_fair_release(cg_core *core);
/* The resume pass, for callers outside core.c (fairshare.c, after ceilings grew). */
void cg_reschedule(cg_core *core, unsigned dev, cg_time now);

/* Allocation through the configured hooks; every failure is reported, never fatal. */
void *cg_mem_alloc(cg_core *core, size_t size);
void cg_mem_free(cg_core *core, void *p, size_t size);

/* splitmix64: the core's only randomness, seeded from cg_config. */
static inline uint64_t cg_rng_next(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Uniform in [0, n), n > 0, without modulo bias. */
uint64_t cg_rng_below(uint64_t *state, uint64_t n);

/* Policy tables (policy.c, placement.c). */
extern const struct cg_resume_ops *const cg_resume_table[CG_RESUME__COUNT];
extern const struct cg_place_ops *const cg_place_table[CG_PLACE__COUNT];

#endif
