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
#include "treap.h"

typedef struct cg_container cg_container;
typedef struct cg_process cg_process;
typedef struct cg_pending cg_pending;

/* A suspended allocation request, in its container's queue (waitq.h). */
struct cg_pending {
    cg_treap tnode;              /* index node (waitq.c): a treap keyed by seq; first, so that a
                                  * node is its request at no cost */
    cg_reqid req;
    cg_bytes bytes;              /* size asked for + context charge when `charges` */
    bool charges;                /* this request carries its process's first context charge */
    cg_process *proc;
    uint64_t seq;                /* arrival number in its container */
    cg_pending *prev, *next;     /* the container's queue, arrival order */
    cg_pending *pprev, *pnext;   /* its process's requests, arrival order */
    cg_bytes tmin, tmax;         /* least and greatest size in the subtree */
};

struct cg_process {
    cg_pid pid;
    cg_bytes used;               /* includes the context charge once charged */
    unsigned npending;
    cg_bytes swapped;            /* on the host (swap.c); not part of `used` */
    bool charged;                /* context charge taken */
    bool charge_pending;         /* a pending request carries the charge */
    cg_pending *phead, *ptail;   /* its pending requests, arrival order */
    cg_process *prev, *next;     /* the container's processes */
};

struct cg_container {
    cg_treap tnode;              /* safety index node (safety.c); first, so that a node is its
                                  * container at no cost */
    cg_cid cid;
    unsigned dev;
    cg_bytes limit, assigned, used;
    cg_bytes limit_waiting;      /* target of a waiting raise; 0 when none */
    unsigned compute_pct;        /* 0 = no compute limit, else 1..100 (share.c) */
    cg_compute_mode compute_mode;/* ELASTIC when compute_pct is 0 */
    unsigned priority;           /* 0..CG_PRIORITY_MAX (priority.c) */
    bool no_swap;
    bool held;                   /* out by the operator's order: not brought back by itself */
    bool hold_tenant;            /* its tenant held it out: in the hold pool until back in */
    cg_residency swap;          /* swap.c */
    cg_bytes swapped;            /* on the host: the sum of its processes' */
    cg_bytes swap_reserved;      /* host budget taken: MOVING_OUT its assignment at the order,
                                  * MOVING_IN what is still on the host, else 0 */
    cg_bytes swap_expect;        /* MOVING_OUT: what should leave the device (incoming) */
    bool returned;               /* has come back from a swap at least once */
    cg_time resident_since;      /* last swap-in done (when `returned`) */
    bool lending;                /* out because it stepped aside (stepaside.c), until back in */
    bool paused;                 /* out through the driver's checkpoint (pause.c), until back */
    cg_time lent_at;             /* when it stepped aside (when `lending`) */
    cg_time served_at;           /* last end of a suspension (its requests granted) */
    uint64_t round;              /* reschedule round that last offered it memory (priority.c) */
    bool waiting;                /* in its device's waiting ("suspended") list */
    uint32_t tenant;
    cg_bytes fair_share, fair_ceiling; /* its tenant's on its device (fairshare.c) */
    bool exclusive;              /* holds its device alone (exclusive.c) */
    cg_cid gang;                 /* its gang's first member, or CG_CID_NONE (gang.c) */
    bool reserved;               /* a gang member: assigned == limit always (gang.c) */
    bool queued;                 /* a gang member whose gang waits to be admitted: assigned ==
                                  * used == 0 until every member can take its whole limit at
                                  * once (gang.c); its requests wait (CG_WHY_GANG) */
    bool expired;                /* a gang member whose gang waited past the bound and was given
                                  * up (cg_gang_expire): holds nothing, never admitted, its
                                  * requests rejected at once (CG_WHY_GANG_EXPIRED) */
    unsigned util_pct;           /* its application's utilisation alone, 0..100; 0: unknown */
    uint64_t app;                /* its application's profile-key hash; 0: unknown */
    cg_time created_at, suspended_since, total_suspended;
    unsigned nprocs, npending;
    cg_bytes pending_bytes;
    uint64_t pass;               /* resume pass that last considered it */
    cg_container *prev, *next;   /* all containers, creation order */
    cg_container *sprev, *snext; /* device's suspended containers, suspension order */
    cg_container *wprev, *wnext; /* device's containers with a waiting limit raise */
    cg_process *procs;
    cg_pending *phead, *ptail;   /* pending requests, arrival order (waitq.h) */
    cg_treap *proot;             /* their index */
    uint64_t pseq;               /* arrival numbers handed out */
    /* Safety index summary (safety.c; its node is tnode, first above). */
    cg_bytes tneed, tassigned;   /* the values the node was inserted with */
    int64_t tsum;                /* sum of assignments in the subtree */
    int64_t tmax;                /* max over the subtree of need - assignments before it */
};

typedef struct {
    cg_bytes total, reserve, capacity, context_charge;
    cg_bytes assigned, used;
    unsigned ncontainers, nsuspended;
    unsigned hard_pct;                    /* sum of its containers' hard shares, <= 100 */
    cg_cid exclusive;                     /* its exclusive container, or CG_CID_NONE */
    cg_treap *root;                       /* safety index (safety.c) */
    cg_container *shead, *stail;          /* suspended, suspension order */
    cg_container *whead, *wtail;          /* waiting limit raises, arrival order */
    cg_bytes swap_incoming;               /* sum of swap_reserved of its MOVING_OUT containers */
    /* What lets a resume round skip its class-by-class scans (priority.c): its containers
     * that are not RESIDENT, and its waiting containers by priority. */
    unsigned nswap_state;
    unsigned nwait_prio[CG_PRIORITY_MAX + 1];
} cg_device;

/* A resume policy picks, among the device's suspended containers not yet considered in this
 * pass (c->pass != pass), the one to offer memory to next; NULL when none is left. */
struct cg_resume_ops {
    const char *name;
    cg_container *(*pick)(cg_core *core, cg_device *dev, cg_bytes free, uint64_t pass,
                          cg_time now);
};

/* A placement policy picks a device index for a new container (spec: its limit, and what is
 * known of its application: util_pct, app) with a hard share of `hard` percent (0 for an
 * elastic share or none) among the devices that fit it (dev_fits(d, spec->limit, hard)); -1
 * when none does (the core then falls back). Policies that compare devices compare their room
 * (dev_room), which weighs compute as well as memory. */
struct cg_place_ops {
    const char *name;
    int (*pick)(const cg_core *core, const cg_container_spec *spec, unsigned hard);
};

/* The load a container puts on its device for load-balance and standalone placement
 * (place_load.c): its application's utilisation alone when known, else its hard share (the
 * time it is promised), else 0 — a container nothing is known of is taken as idle, so
 * unprofiled containers spread by room as least-loaded spreads them. */
unsigned cg_container_load(const cg_container *c);
/* Every device's summed load, into sums[0..ndev). O(containers). */
void cg_place_loads(const cg_core *core, unsigned sums[CG_MAX_DEVICES]);
/* Among the devices that fit (limit, hard), the one with the least load in `sums`, ties to the
 * most room, then the lowest index; -1 when none fits (load-balance's rule, standalone's last
 * resort). */
int cg_place_least_load(const cg_core *core, const unsigned sums[CG_MAX_DEVICES], cg_bytes limit,
                        unsigned hard);

struct cg_core {
    cg_config cfg;
    const struct cg_resume_ops *resume;
    const struct cg_place_ops *place;
    cg_device dev[CG_MAX_DEVICES];
    unsigned ndev;
    cg_cid next_cid;
    uint64_t pass;
    uint64_t round;                       /* reschedule rounds (priority.c) */
    cg_bytes swap_host;                   /* see cg_swap_host_bytes */
    unsigned npaused;                     /* containers with `paused` (pause.c) */
    uint64_t rng;                         /* splitmix64 state for the random policy */
    cg_container *head, *tail;            /* creation order */
    unsigned ncontainers;
    unsigned nqueued;                     /* queued gang members (gang.c): 0 skips the tries */
    cg_hash by_cid, by_pid, by_req;
    size_t bytes_held;                    /* what the core has allocated, for the footprint */
    cg_fair_mode fair;
    cg_hash by_tenant;                    /* (tenant, 0) -> cg_tenant, for those with a record */
    struct cg_fair_claim *fair_buf;       /* scratch for the ceilings, >= ncontainers entries */
    size_t fair_cap;
    /* The link between two devices (topology.c): cg_link + 1, 0 when never set (SYSTEM). */
    uint8_t link[CG_MAX_DEVICES][CG_MAX_DEVICES];
};

static inline cg_bytes dev_free(const cg_device *d) { return d->capacity - d->assigned; }
static inline cg_bytes ctr_need(const cg_container *c) { return c->limit - c->assigned; }

/* ---- swap and priorities (swap.c, priority.c) ---- */

/* What counts against the limit: the use on the device and what is on the host. */
static inline cg_bytes ctr_charged(const cg_container *c) { return c->used + c->swapped; }
/* Out (or on its way) and not to be offered memory by the resume pass: moving out (its
 * assignment is about to shrink) or held out by the operator. */
static inline bool ctr_hidden(const cg_container *c)
{
    return c->swap == CG_MOVING_OUT || (c->swap == CG_SWAPPED_OUT && c->held) || c->queued;
}
/* Its requests are not granted now (the memory is leaving or gone); they wait. */
static inline bool ctr_frozen(const cg_container *c)
{
    return c->swap == CG_MOVING_OUT || c->swap == CG_SWAPPED_OUT;
}
/* In the device's waiting list: it has suspended requests, or it is out and wants back in. */
static inline bool ctr_waits(const cg_container *c)
{
    return c->npending > 0 || (c->swap == CG_SWAPPED_OUT && !c->held);
}
static inline cg_time aging_step(const cg_core *core);
/* Adds c to / removes it from its device's waiting list when ctr_waits changed (core.c). */
void cg_wait_update(cg_core *core, cg_container *c, cg_time now);
/* Raise c's assignment by g (safety already checked) and emit ASSIGN. */
void cg_assign_more(cg_core *core, cg_container *c, cg_bytes g, cg_reason why, cg_time now);
/* Sets c's assignment to a (a lowering, always safe) and emits UNASSIGN. */
void cg_assign_less(cg_core *core, cg_container *c, cg_bytes a, cg_reason why, cg_time now);
/* Emits one event about c (core.c). */
void cg_emit(cg_core *core, cg_event_kind kind, cg_reason why, const cg_container *c, cg_pid pid,
             cg_reqid req, cg_bytes bytes, cg_time now);
/* Rejects every pending request of c with reason why, oldest first (core.c). */
void cg_reject_pending(cg_core *core, cg_container *c, cg_reason why, cg_time now);
/* Grants and rejects c's pending requests after its U, A or L changed (core.c). */
void cg_drain_own(cg_core *core, cg_container *c, cg_reason why, cg_time now);
/* The resume pass of a device (core.c). */
void cg_reschedule(cg_core *core, unsigned dev, cg_time now);

/* swap.c: after request `req` of container r suspended, or a swap-out finished: orders victims
 * out when that lets the device's most urgent waiting container be granted. */
void cg_swap_consider(cg_core *core, unsigned dev, cg_time now);
/* swap.c: a waiting OUT container was just offered memory: orders it in when its assignment
 * now holds what is on the host. */
void cg_swap_in_if_room(cg_core *core, cg_container *c, cg_time now);
/* swap.c: orders c out (MOVING_OUT); `whole`: all of its assignment is expected to leave, its
 * context charges too (a pause, pause.c). */
void cg_swap_order_out(cg_core *core, cg_container *c, cg_reason why, cg_reqid req, bool whole,
                       cg_time now);
/* pause.c: host memory of paused containers (in swap_host, but outside the swap budget: a
 * paused process keeps its own copy, which the operator asked for). */
cg_bytes cg_pause_host(const cg_core *core);
/* ---- stepping aside (stepaside.c; docs/SCHEDULING.md "Stepping aside (seed 001)") ---- */

/* Whether the rule is on: swap on and not turned off. */
static inline bool cg_step_aside_on(const cg_core *core);
/* A waiting container behind r (r of class cls, the device's most urgent, which `have` bytes
 * of free or incoming memory cannot serve) whose first request r's stepping aside would let
 * the resume pass grant, safely and within its tenant's ceiling; NULL when none, or r may not
 * step aside. */
cg_container *cg_step_aside_for(cg_core *core, cg_container *r, unsigned cls, unsigned top,
                                cg_bytes have, cg_time now);
/* r stepped aside for so long that it now takes back what was handed out since. */
bool cg_step_aside_due(const cg_core *core, const cg_container *r, cg_time now);
/* c got memory on r's device since r stepped aside (a borrower: a victim for r once due). */
bool cg_step_aside_borrower(const cg_container *r, const cg_container *c);
/* After a resume pass: a due lender still waiting on the device gets the victim search. */
void cg_step_aside_reclaim(cg_core *core, unsigned dev, cg_time now);

/* swap.c: drops what a process had on the host (it exited, or its container was removed). */
void cg_swap_forget_process(cg_core *core, cg_container *c, cg_process *p);
/* swap.c: drops a removed container's swap state (budget, incoming). */
void cg_swap_forget_container(cg_core *core, cg_container *c);

/* priority.c: a waiting container's class (see core.h). */
unsigned cg_class(const cg_core *core, const cg_container *c, unsigned top, cg_time now);
/* priority.c: the highest base priority among the device's waiting containers. */
unsigned cg_top_priority(const cg_device *d);
/* priority.c: one resume round over the device's waiting containers, class by class; `offer`
 * gives a picked container memory. */
void cg_resume_round(cg_core *core, unsigned dev, cg_time now,
                     void (*offer)(cg_core *, cg_container *, cg_time));

static inline cg_time aging_step(const cg_core *core)
{
    return core->cfg.aging_step ? core->cfg.aging_step : CG_AGING_STEP_DEFAULT;
}

static inline bool cg_step_aside_on(const cg_core *core)
{
    return core->cfg.swap_limit > 0 && !core->cfg.no_step_aside;
}

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

/* Whether a new container (limit, hard share) fits on the device right now; never on a device
 * an exclusive container holds. */
static inline bool dev_fits(const cg_device *d, cg_bytes limit, unsigned hard)
{
    return dev_free(d) >= limit && dev_admits(d, hard) && d->exclusive == CG_CID_NONE;
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

/* Every change of a container's residency goes through here (the device counts them). */
static inline void ctr_set_swap(cg_core *core, cg_container *c, cg_residency s)
{
    cg_device *d = &core->dev[c->dev];
    d->nswap_state += (s != CG_RESIDENT) - (c->swap != CG_RESIDENT);
    c->swap = s;
}

/* The live container `cid`, or NULL. */
static inline cg_container *cg_find(const cg_core *core, cg_cid cid)
{
    return cid == CG_CID_NONE ? NULL : (cg_container *)cg_hash_get(&core->by_cid, cid, 0);
}
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
/* ---- exclusive containers (exclusive.c) ---- */

/* Admission of a new container as far as exclusivity goes, before anything changes. *device is
 * the device asked for (< 0: placement) and *limit the limit (0 only for an exclusive one). An
 * exclusive container gets an empty device here (named: CG_ERR_BUSY when it has containers;
 * placed: the placement policy's choice among the empty devices that hold the limit) and, with
 * limit 0, that device's capacity; any other container is refused a named device held
 * exclusively (CG_ERR_EXCLUSIVE), and placement skips such devices through dev_fits. */
/* Container creation (core.c), for cg_container_create_spec/restore and gang.c. */
enum cg_create_kind {
    CG_CREATE_NEW,      /* the largest safe assignment up to min(limit, free) */
    CG_CREATE_RESTORE,  /* exactly `want`, else CG_ERR_INVALID */
    CG_CREATE_RESERVE,  /* the whole limit, else CG_ERR_NOT_FREE; the container is reserved */
    CG_CREATE_TRIAL,    /* RESERVE's answer, with nothing created */
    CG_CREATE_QUEUE,    /* nothing assigned; the container is a queued gang member */
};
/* Admits the queued gangs with a member on dev that can now take their whole limits on every
 * device at once, oldest first (gang.c); run before each resume round. */
void cg_gang_admit_queued(cg_core *core, unsigned dev, cg_time now);
cg_status cg_create(cg_core *core, const cg_container_spec *spec, cg_time now,
                    enum cg_create_kind kind, cg_bytes want, cg_cid *cid_out);

cg_status cg_exclusive_admit(const cg_core *core, const cg_container_spec *spec, int *device,
                             cg_bytes *limit);
/* Why placement found no device for a non-exclusive container that some device could hold:
 * CG_ERR_EXCLUSIVE when every such device is held exclusively, else CG_ERR_NO_COMPUTE. */
cg_status cg_exclusive_why_unplaced(const cg_core *core, cg_bytes limit, unsigned hard);
/* Takes or gives back the device of a created or removed container. */
void cg_exclusive_attach(cg_core *core, cg_container *c, bool exclusive);
void cg_exclusive_detach(cg_core *core, const cg_container *c);

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
