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
    bool exclusive;              /* holds its device alone (exclusive.c) */
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
    cg_cid exclusive;                     /* its exclusive container, or CG_CID_NONE */
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

/* ---- exclusive containers (exclusive.c) ---- */

/* Admission of a new container as far as exclusivity goes, before anything changes. *device is
 * the device asked for (< 0: placement) and *limit the limit (0 only for an exclusive one). An
 * exclusive container gets an empty device here (named: CG_ERR_BUSY when it has containers;
 * placed: the placement policy's choice among the empty devices that hold the limit) and, with
 * limit 0, that device's capacity; any other container is refused a named device held
 * exclusively (CG_ERR_EXCLUSIVE), and placement skips such devices through dev_fits. */
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
