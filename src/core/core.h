/* core.h — the pure scheduling core: devices, containers, assignments, suspended requests.
 *
 * One implementation serves the daemon (convgpud) and the simulator (convgpu sim), so every
 * simulated result speaks about the real code. The core does no I/O, reads no clock (time is
 * passed in as `now`, nanoseconds on any monotonic scale), keeps no globals and allocates only
 * through malloc. Decisions are reported through a caller-supplied sink, in the order taken.
 *
 * Semantics (docs/SCHEDULING.md has the full argument):
 *   capacity C = device total - reserve; a container has a limit L <= C, an assignment A
 *   (0 <= A <= L) and a use U <= A (live allocations + one context charge per process that
 *   has allocated on the device). free = C - sum(A). Every change of A leaves the device in
 *   a banker's-safe state (maximum claim = L), so the suspended set can always drain.
 */
#ifndef CONVGPU_CORE_H
#define CONVGPU_CORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CG_MAX_DEVICES 64

typedef uint64_t cg_bytes;
typedef uint64_t cg_time;        /* nanoseconds, caller's monotonic clock */
typedef uint32_t cg_cid;         /* container handle, chosen by the core, never reused */
typedef uint64_t cg_pid;         /* process key, chosen by the caller (host pid in the daemon) */
typedef uint64_t cg_reqid;       /* request id, chosen by the caller, echoed in decisions */

#define CG_CID_NONE 0u

typedef enum {
    CG_OK = 0,
    CG_ERR_INVALID,        /* malformed argument (zero size, unknown policy, ...) */
    CG_ERR_NO_DEVICE,      /* device index out of range, or no device can hold the limit */
    CG_ERR_TOO_LARGE,      /* limit above the device capacity */
    CG_ERR_NOT_FOUND,      /* unknown container or process */
    CG_ERR_BELOW_USE,      /* limit lowered below current use */
    CG_ERR_NOMEM,          /* the core itself could not allocate */
    CG_ERR_EXISTS,         /* duplicate request id or process */
    CG_ERR_NO_COMPUTE,     /* the hard compute shares on the device would exceed 100% */
    CG_ERR_NO_SWAP,        /* swap is off (no budget) or the container refuses it (no_swap) */
    CG_ERR_SWAP_BUDGET,    /* the host-memory budget for swap would be exceeded */
    CG_ERR_STATE,          /* the container is not in a state that allows this (swap.h) */
    CG_ERR_BUSY,           /* an exclusive container asked for a device that has containers */
    CG_ERR_EXCLUSIVE,      /* the device is held by an exclusive container (exclusive.c) */
    CG_ERR_NOT_FREE,       /* a container on several devices (gang.c) needs memory free now */
} cg_status;

const char *cg_status_str(cg_status s);

typedef enum {
    CG_RESUME_FIFO = 0,    /* oldest-created suspended container */
    CG_RESUME_BEST_FIT,    /* shortfall closest to, not above, free; else smallest shortfall */
    CG_RESUME_RECENT,      /* most recently suspended */
    CG_RESUME_RANDOM,      /* uniform among suspended, seeded */
    CG_RESUME_AGING_FIT,   /* ours: largest that fits, aged by waiting time (docs/SCHEDULING.md) */
    CG_RESUME__COUNT
} cg_resume_policy;

typedef enum {
    CG_PLACE_FIRST_FIT = 0,  /* first device whose free memory holds the limit */
    CG_PLACE_LEAST_LOADED,   /* most free memory (GSaaS Algorithm 1) */
    CG_PLACE_BINPACK,        /* fullest device that still holds the limit */
    CG_PLACE_LOAD_BALANCE,   /* least summed utilisation (seed 003; place_load_balance.c) */
    CG_PLACE_STANDALONE,     /* equal applications together (seed 003; place_standalone.c) */
    CG_PLACE_INTERFERENCE,   /* the least measured slowdown beside the residents (seed 003's
                              * matrix, cg_config.slowdown; place_interference.c) */
    CG_PLACE__COUNT
} cg_placement_policy;

/* A container's compute share: a whole percentage of one device's time, 1..100, or 0 for no
 * compute limit. A HARD share is both a cap (never more, even on an idle device) and a
 * guarantee, so the hard shares on one device sum to at most 100 (admission, share.c). An
 * ELASTIC share may use time nobody else wants and is admitted against nothing. The core keeps
 * and admits shares here; the controller that turns them into gates is compute.h. */
typedef enum { CG_COMPUTE_ELASTIC = 0, CG_COMPUTE_HARD, CG_COMPUTE__COUNT } cg_compute_mode;
#define CG_COMPUTE_PCT_MAX 100u

/* Names used on command lines and in the API: "fifo", "best-fit", "recent", "random", ...;
 * "first-fit", "least-loaded", "binpack", "load-balance", "standalone"; "elastic", "hard". Lookups return false for unknown
 * names. */
const char *cg_resume_policy_name(cg_resume_policy p);
bool cg_resume_policy_parse(const char *name, cg_resume_policy *out);
const char *cg_placement_policy_name(cg_placement_policy p);
bool cg_placement_policy_parse(const char *name, cg_placement_policy *out);
const char *cg_compute_mode_name(cg_compute_mode m);
bool cg_compute_mode_parse(const char *name, cg_compute_mode *out);
/* A share as people write it: a whole number of percent, 1..100, digits only (an optional
 * trailing '%'); "0", "101", "-5", "30.5", "abc", "" and "+30" are refused. */
bool cg_compute_pct_parse(const char *text, unsigned *out);
/* "N%" or "N", a whole number 1..max (max <= 1000), into *out; false, *out untouched, otherwise. */
bool cg_pct_parse(const char *text, unsigned max, unsigned *out);

/* What the core decided. Sent to the sink synchronously, inside the call that caused it. */
typedef enum {
    CG_EV_ADMIT,     /* container created on `device`; `bytes` = its limit (an ASSIGN with the
                      * initial assignment follows when it is not 0) */
    CG_EV_ASSIGN,    /* assignment raised by `bytes` (creation, request or resume) */
    CG_EV_UNASSIGN,  /* assignment lowered by `bytes` (limit lowered, removal) */
    CG_EV_GRANT,     /* request `req` granted at once: `bytes` charged (incl. context) */
    CG_EV_SUSPEND,   /* request `req` suspended; the container is suspended */
    CG_EV_RESUME,    /* suspended request `req` granted now; `bytes` charged */
    CG_EV_REJECT,    /* request `req` failed: over limit, or cancelled (see reason) */
    CG_EV_RELEASE,   /* `bytes` of use returned (free or process exit) */
    CG_EV_REMOVE,    /* container removed */
    CG_EV_LIMIT,     /* limit changed to `bytes` (at once, or when a waiting raise is applied) */
    CG_EV_COMPUTE,   /* compute share set to `compute_pct` (0: none) in `compute_mode`: at
                      * creation with a share (after ADMIT), or changed later */
    CG_EV_SWAP_OUT,  /* order: move container `cid` out to host memory; `bytes` = the most that
                      * can leave (its assignment); `req` = the request it makes room for
                      * (reason VICTIM) or 0 (reason OPERATOR). Reported back with
                      * cg_process_swap_out + cg_swap_out_done. */
    CG_EV_SWAP_IN,   /* order: bring container `cid` back; `bytes` = what comes back, already
                      * charged again to its processes (their use includes it from now on).
                      * Reported back with cg_swap_in_done. */
    CG_EV_PRIORITY,  /* priority set to `bytes` (0..CG_PRIORITY_MAX), after creation */
} cg_event_kind;

typedef enum {
    CG_WHY_NONE = 0,
    CG_WHY_FITS_ASSIGNMENT,  /* granted within the existing assignment */
    CG_WHY_RAISED,           /* granted after raising the assignment from free memory */
    CG_WHY_NO_FREE,          /* suspended: not enough free memory */
    CG_WHY_UNSAFE,           /* suspended: raising now would leave an unsafe state */
    CG_WHY_OVER_LIMIT,       /* rejected: use + size > limit */
    CG_WHY_PROCESS_EXIT,     /* cancelled/released: the process exited */
    CG_WHY_REMOVED,          /* cancelled/released: the container was removed */
    CG_WHY_POLICY,           /* assignment or resume chosen by the resume policy */
    CG_WHY_LIMIT_CHANGED,    /* limit lowered */
    CG_WHY_FREE,             /* bytes freed by the application */
    CG_WHY_VICTIM,           /* swapped out so that request `req` can be granted (swap.c) */
    CG_WHY_OPERATOR,         /* the operator's order (cg_swap_order) */
    CG_WHY_SWAPPED,          /* suspended: the container is out (or on its way out) */
    CG_WHY_FAIR_SHARE,       /* suspended: the raise would take the tenant over its ceiling */
    CG_WHY_STEP_ASIDE,       /* swapped out while it waits, so that request `req` of a container
                              * behind it can be granted (stepaside.c) */
    CG_WHY_GANG,             /* suspended: its gang waits to be admitted on all its devices at
                              * once (gang.c, cg_gang_create_or_queue) */
    CG_WHY_GANG_EXPIRED,     /* rejected: its gang waited past the operator's bound and was
                              * given up (gang.c, cg_gang_expire) */
} cg_reason;

const char *cg_event_kind_name(cg_event_kind k);
const char *cg_reason_str(cg_reason r);

typedef struct {
    cg_event_kind kind;
    cg_reason reason;
    cg_cid cid;
    unsigned device;
    unsigned compute_pct;          /* CG_EV_COMPUTE only; 0 otherwise */
    cg_compute_mode compute_mode;  /* CG_EV_COMPUTE only; ELASTIC otherwise */
    cg_pid pid;        /* 0 when not about one process */
    cg_reqid req;      /* 0 when not about one request */
    cg_bytes bytes;
    cg_time now;
} cg_event;

typedef void (*cg_event_sink)(void *ctx, const cg_event *ev);

typedef struct {
    cg_resume_policy resume;
    cg_placement_policy placement;
    uint64_t seed;               /* for the random policy; same seed => same decisions */
    cg_event_sink sink;          /* may be NULL; must not call back into the core */
    void *sink_ctx;
    /* Allocator (NULL: malloc/free). Tests inject failures here: every failure makes the call
     * return CG_ERR_NOMEM with the state unchanged. */
    void *(*mem_alloc)(void *ctx, size_t size);
    void (*mem_free)(void *ctx, void *p);
    void *mem_ctx;
    /* Swap (swap.c): host memory the swapped-out containers may hold together, node-wide.
     * 0: the core never orders a swap, and cg_swap_order refuses. */
    cg_bytes swap_limit;
    /* Held swaps (swap.c, cg_swap_hold): the percent of swap_limit, 0..100, that tenants'
     * holds of their own containers may take together (0: tenants may not hold); each tenant
     * at most its weight's part of that among the tenants with a container on the node. */
    unsigned swap_hold_pct;
    /* Priorities (priority.c): waiting this long lifts a container one priority class, so low
     * priorities never starve; it is also how long a container swapped back in is protected
     * from being swapped out again for a running victim's sake. 0: CG_AGING_STEP_DEFAULT. */
    cg_time aging_step;
    /* Stepping aside (stepaside.c, docs/SCHEDULING.md "Stepping aside (seed 001)"): with swap
     * on, a waiting container that cannot be served may be swapped out so that a container
     * behind it runs; after step_aside_bound (0: aging_step) it takes back what was handed out
     * since. no_step_aside turns the rule off. */
    bool no_step_aside;
    cg_time step_aside_bound;
    /* Seed 003's interference matrix, for the interference placement (place_interference.c):
     * the measured slowdown, in thousandths (1000: none), of application `fg` running beside
     * application `bg` on one device (applications as cg_container_spec.app), 0 when nobody
     * measured the pair. NULL: nothing is known. Must not call back into the core. */
    uint32_t (*slowdown)(void *ctx, uint64_t fg, uint64_t bg);
    void *slowdown_ctx;
    /* Automatic pause (swap.c's victims, victim_backend.c, docs/SCHEDULING.md "Swap or
     * checkpoint"): the caller has a checkpoint-capable driver and the operator allows the
     * scheduler to checkpoint a victim (whole: allocations and contexts) where swap frees too
     * little. Off by default; the victim comes back by itself through the resume pass, and
     * whoever carries the order out ends it with cg_pause_in_done (cg_paused tells). */
    bool auto_pause;
} cg_config;

#define CG_PRIORITY_MAX 9u
#define CG_AGING_STEP_DEFAULT (60ull * 1000000000ull)

typedef struct cg_core cg_core;

cg_core *cg_core_new(const cg_config *cfg);
void cg_core_free(cg_core *core);

/* Devices are added once, in index order, before containers are created.
 * capacity = total - reserve; context_charge is what a process's first allocation adds. */
cg_status cg_device_add(cg_core *core, cg_bytes total, cg_bytes reserve,
                        cg_bytes context_charge, unsigned *index_out);
cg_status cg_device_set_context_charge(cg_core *core, unsigned device, cg_bytes charge);

cg_status cg_set_resume_policy(cg_core *core, cg_resume_policy p, cg_time now);
cg_status cg_set_placement_policy(cg_core *core, cg_placement_policy p);

/* What a new container asks for: a device (< 0: the placement policy chooses), a memory limit
 * L and a compute share (compute_pct 0: none; the mode of no share is ELASTIC whatever is
 * given). An exclusive container takes a whole device (exclusive.c): it is admitted only on a
 * device with no container, none is placed or admitted beside it while it lives, and a limit of
 * 0 means the capacity of the device it gets. */
typedef struct {
    int device;
    cg_bytes limit;
    unsigned compute_pct;
    cg_compute_mode compute_mode;
    unsigned priority;   /* 0..CG_PRIORITY_MAX, higher goes first (priority.c); else INVALID */
    bool no_swap;        /* never swapped out, by the policy or the operator */
    uint32_t tenant;             /* CG_TENANT_DEFAULT (0) unless the caller names one */
    bool exclusive;
    /* What placement knows of the application (seed 003), from its profile; 0: unknown.
     * util_pct: its measured GPU utilisation alone, 0..100 (load-balance placement); above 100
     * creation answers CG_ERR_INVALID, changing nothing;
     * app: its profile key's hash (standalone placement puts equal applications together). */
    unsigned util_pct;
    uint64_t app;
} cg_container_spec;

/* Create a container. Assignment at creation: the largest safe amount <= min(L, free).
 * Placement (device < 0) considers only devices that can admit a hard share; on a named
 * device a hard share that does not fit is CG_ERR_NO_COMPUTE, as it is when no device with
 * the capacity for L can admit it. A share above 100 or an unknown mode: CG_ERR_INVALID.
 * Events: ADMIT, ASSIGN (when A > 0), COMPUTE (when a share is given). */
cg_status cg_container_create_spec(cg_core *core, const cg_container_spec *spec, cg_time now,
                                   cg_cid *cid_out);
/* The same without a compute share. */
cg_status cg_container_create(cg_core *core, int device, cg_bytes limit, cg_time now,
                              cg_cid *cid_out);
/* Re-create a container exactly as recorded (a daemon restart): on `device`, with `limit` and
 * the assignment `assigned`, created at `created_at` (restore in creation order so FIFO order
 * survives). Fails with CG_ERR_INVALID, changing nothing, when `assigned` exceeds the limit or
 * the free memory or would leave the device unsafe. Processes' use is restored afterwards with
 * cg_process_set_use. */
cg_status cg_container_restore(cg_core *core, unsigned device, cg_bytes limit, cg_bytes assigned,
                               cg_time created_at, cg_cid *cid_out);
/* The same with a tenant (and whatever else the spec carries; spec->device must be >= 0). */
cg_status cg_container_restore_spec(cg_core *core, const cg_container_spec *spec,
                                    cg_bytes assigned, cg_time created_at, cg_cid *cid_out);
/* Makes a restored container exclusive again (exclusive.c): CG_ERR_BUSY, changing nothing, when
 * another container shares its device. */
cg_status cg_container_restore_exclusive(cg_core *core, cg_cid cid);
/* Remove: cancels pending requests (REJECT/REMOVED), returns the assignment, resumes others. */
cg_status cg_container_remove(cg_core *core, cg_cid cid, cg_time now);
/* Change the limit (GaiaGPU's elastic limits). Lowering below use -> CG_ERR_BELOW_USE, nothing
 * changes; lowering otherwise returns assignment above the new limit to free memory (and resumes
 * others). Raising raises the maximum claim: applied at once when the device stays safe, else it
 * waits (*pending_out = true) and is applied, in arrival order, after a later release makes it safe;
 * a later set_limit replaces a waiting one. Limit > capacity -> CG_ERR_TOO_LARGE. */
cg_status cg_container_set_limit(cg_core *core, cg_cid cid, cg_bytes limit, cg_time now,
                                 bool *pending_out);

/* Set a container's compute share (pct 0: no compute limit). Admission: a HARD share must fit
 * in 100 minus the other hard shares on its device, else CG_ERR_NO_COMPUTE and nothing
 * changes; an ELASTIC share is admitted against nothing. pct > 100 or an unknown mode:
 * CG_ERR_INVALID. A change emits COMPUTE; setting what it already has emits nothing. */
cg_status cg_container_set_compute(cg_core *core, cg_cid cid, unsigned pct, cg_compute_mode mode,
                                   cg_time now);
/* What cg_container_set_compute would answer, changing nothing (callers that must store a
 * change before making it ask first). */
cg_status cg_container_compute_check(const cg_core *core, cg_cid cid, unsigned pct,
                                     cg_compute_mode mode);

/* Ask for `bytes` on behalf of process `pid` of container `cid`. The first request of a pid on
 * a container adds the device's context charge. Outcome goes to the sink (GRANT, SUSPEND or
 * REJECT), and is also returned: */
typedef enum { CG_GRANTED, CG_SUSPENDED, CG_REJECTED } cg_outcome;
cg_status cg_request(cg_core *core, cg_cid cid, cg_pid pid, cg_reqid req, cg_bytes bytes,
                     cg_time now, cg_outcome *outcome);
/* Withdraw a suspended request (the caller gave up, e.g. a timeout): REJECT is not emitted. */
cg_status cg_request_cancel(cg_core *core, cg_cid cid, cg_reqid req, cg_time now);
/* Return `bytes` of process pid's use (a free). More than the process uses -> CG_ERR_INVALID. */
cg_status cg_release(cg_core *core, cg_cid cid, cg_pid pid, cg_bytes bytes, cg_time now);
/* Set process pid's use to an absolute value (the daemon reconciles use that processes charged
 * within their assignment without asking). Must keep U <= A; else CG_ERR_INVALID, no change. */
cg_status cg_process_set_use(cg_core *core, cg_cid cid, cg_pid pid, cg_bytes use, cg_time now);
/* A process ended: its use and context charge return, its pending requests are cancelled. */
cg_status cg_process_exit(cg_core *core, cg_cid cid, cg_pid pid, cg_time now);

/* ---- priorities (priority.c) ----
 * A container's priority is 0..CG_PRIORITY_MAX (higher first). Waiting containers are resumed
 * class by class, highest first; within a class the resume policy chooses. A waiting container's
 * class is its priority plus one per aging step waited, but never above the highest priority
 * waiting on its device: equal priorities stay one class (the policy alone decides, as without
 * priorities), and a low priority reaches the top after (top - own) aging steps. */
cg_status cg_container_set_priority(cg_core *core, cg_cid cid, unsigned priority, cg_time now);
/* Whether the container may be swapped (a restart restores it); only while it is in. */
cg_status cg_container_set_no_swap(cg_core *core, cg_cid cid, bool no_swap);

/* ---- swap (swap.c, docs/SWAP.md and docs/SCHEDULING.md "Swap") ----
 * A container is RESIDENT, MOVING_OUT (ordered out; its processes are copying), OUT (its
 * swappable memory is on the host; its assignment shrank to what stayed on the device) or
 * MOVING_IN (ordered in; its use is charged again; its processes are copying back). */
typedef enum {
    CG_RESIDENT = 0,
    CG_MOVING_OUT,
    CG_SWAPPED_OUT,
    CG_MOVING_IN,
} cg_residency;
const char *cg_residency_name(cg_residency s);

/* The operator's order. Out: RESIDENT only (else CG_ERR_STATE), not no_swap and swap on (else
 * CG_ERR_NO_SWAP), within the budget (else CG_ERR_SWAP_BUDGET); the container is then *held*:
 * it does not come back by itself. In: OUT only; ends the hold, and the container comes back
 * through the resume policy like any waiting one (at once when the memory is free). */
cg_status cg_swap_order(cg_core *core, cg_cid cid, bool out, cg_time now);
/* Who holds a container out (docs/SWAP.md, "Held swaps"). An operator's hold is bounded by the
 * budget only; a tenant's hold of its own container also by the hold pool (swap_hold_pct of the
 * budget, all tenants' holds together) and by its tenant's weighted part of that pool. The
 * scheduler's victims and operators' orders do not count tenants' holds (until those containers
 * are back in), so a tenant's hold never stops a preemption. Refusals: as cg_swap_order,
 * CG_ERR_SWAP_BUDGET for any of the bounds. */
typedef enum { CG_HOLD_NONE = 0, CG_HOLD_OPERATOR = 1, CG_HOLD_TENANT = 2 } cg_hold;
/* NONE orders the container in (ends any hold); OPERATOR or TENANT orders it out, held. */
cg_status cg_swap_hold(cg_core *core, cg_cid cid, cg_hold hold, cg_time now);
/* What cg_swap_hold would answer now, changing nothing (a caller stores the order first). */
cg_status cg_swap_hold_check(cg_core *core, cg_cid cid, cg_hold hold);
/* Who holds container cid out now (NONE: not held, or no such container). */
cg_hold cg_swap_hold_of(const cg_core *core, cg_cid cid);
/* The hold pool and what tenant's holds may still take of it, for a refusal's words. */
typedef struct {
    cg_bytes pool, pool_held;      /* swap_hold_pct of the budget; all tenants' holds */
    cg_bytes share, tenant_held;   /* the tenant's weighted part of the pool; its holds */
} cg_hold_room;
cg_status cg_swap_hold_room(cg_core *core, uint32_t tenant, cg_hold_room *out);
/* Process pid of a MOVING_OUT container moved `bytes` of its use to the host (<= its use). */
cg_status cg_process_swap_out(cg_core *core, cg_cid cid, cg_pid pid, cg_bytes bytes, cg_time now);
/* Every process of a MOVING_OUT container reported: its assignment shrinks to its use (what
 * stayed on the device), the memory goes to the waiting containers. */
cg_status cg_swap_out_done(cg_core *core, cg_cid cid, cg_time now);
/* Every process of a MOVING_IN container reported back: it is RESIDENT again. */
cg_status cg_swap_in_done(cg_core *core, cg_cid cid, cg_time now);
/* A daemon restart: process pid of container cid has `bytes` on the host (its container is OUT
 * or was moving); then the container's state (held for the operator's order). */
cg_status cg_process_restore_swapped(cg_core *core, cg_cid cid, cg_pid pid, cg_bytes bytes);
cg_status cg_swap_restore(cg_core *core, cg_cid cid, cg_residency state, bool held, cg_time now);
/* The same with who held it (a tenant's hold is restored as one, counted in the pool). */
cg_status cg_swap_restore_hold(cg_core *core, cg_cid cid, cg_residency state, cg_hold hold,
                               cg_time now);

/* ---- pause, resume, move (pause.c, docs/PAUSE.md) ----
 * A pause is a held swap-out of everything, carried out by the driver's checkpoint: the
 * daemon reports each process's whole use (cg_process_swap_out) and ends it (cg_swap_out_done);
 * the assignment drops to 0, the limit stays. Outside the swap budget; swap need not be on.
 * Refused (CG_ERR_STATE) unless RESIDENT, and for gang members. */
cg_status cg_pause(cg_core *core, cg_cid cid, cg_time now);
bool cg_paused(const cg_core *core, cg_cid cid);
/* A paused container that is OUT comes back through the resume pass (banker's-safe), which
 * emits CG_EV_SWAP_IN; the daemon restores its processes, then cg_pause_in_done. */
cg_status cg_pause_resume(cg_core *core, cg_cid cid, cg_time now);
/* A paused, OUT, held container moves to device dev, reserving there all it had first:
 * CG_ERR_NOT_FREE (nothing changed) when that is not free and safe now; CG_ERR_STATE when it
 * is not paused and out, waits for something, is a gang member, or is on dev already;
 * CG_ERR_EXCLUSIVE, CG_ERR_TOO_LARGE, CG_ERR_NO_COMPUTE as placement would. Then it comes back
 * on dev as after cg_pause_resume. _check answers the same without changing anything. */
cg_status cg_pause_move_check(const cg_core *core, cg_cid cid, unsigned dev);
cg_status cg_pause_move(cg_core *core, cg_cid cid, unsigned dev, cg_time now);
cg_status cg_pause_in_done(cg_core *core, cg_cid cid, cg_time now);
/* A daemon restart: container cid was paused (its processes' bytes restored with
 * cg_process_restore_swapped): OUT, held, paused, holding nothing on the device. */
cg_status cg_pause_restore(cg_core *core, cg_cid cid, cg_time now);

/* ---- the back end for a victim (victim_backend.c, docs/SCHEDULING.md "Swap or checkpoint") --
 * For one victim the scheduler picked: swap (frees its allocations, keeps its contexts on the
 * device and its process running) or checkpoint (frees everything, contexts included; the
 * process stops until it is restored). Pure arithmetic on what the caller states. */
typedef enum { CG_BACKEND_NONE, CG_BACKEND_SWAP, CG_BACKEND_CHECKPOINT } cg_backend;
typedef struct {
    cg_bytes allocations;  /* what a swap moves to the host and frees on the device */
    cg_bytes contexts;     /* its processes' context charges: a checkpoint frees them too */
    cg_bytes need;         /* what is still lacking on the device (0: nothing) */
    bool can_swap;         /* swap is on, the container allows it, the budget holds its copy */
    bool can_checkpoint;   /* a checkpoint-capable driver, automatic pause allowed, and the
                            * container may be paused (not a gang member, not exclusive) */
} cg_backend_case;
typedef struct {
    cg_backend backend;
    cg_bytes frees;        /* on the device */
    cg_bytes moves;        /* to the host */
} cg_backend_choice;
/* Swap when it frees enough by itself, or when neither frees enough alone (a running process
 * is worth keeping; the rest comes from the next victim); checkpoint when only it frees enough,
 * or when it is the only back end that frees anything; NONE when neither frees anything. */
cg_backend_choice cg_victim_backend(const cg_backend_case *in);
const char *cg_backend_name(cg_backend b);

/* ---- a move to make room (defrag.c, docs/SCHEDULING.md "Moving a container to make room") --
 * A request fits on no GPU of the node but would fit on one after one of its containers moves
 * to another GPU of the same model (the driver restores only onto the same chip). Pure: the
 * caller states each device's model and what a safe reservation could take there now, each
 * container's device and whole assignment (what a move reserves on the target first), and how
 * many moves its operator's bound still allows. */
typedef struct {
    uint32_t model;        /* same model <=> same value (the daemon: name and memory size) */
    cg_bytes free;         /* what a banker's-safe reservation could take there now */
} cg_defrag_device;
typedef struct {
    unsigned device;
    cg_bytes holds;        /* its whole assignment: reserved on the target before it leaves */
    bool movable;          /* running, not a gang member, not exclusive, not held by anyone */
} cg_defrag_container;
typedef struct {
    bool found;
    size_t container;      /* index into the caller's containers */
    unsigned from, to;
    cg_bytes moves;        /* bytes the move takes off `from` (= holds) */
} cg_defrag_move;
/* The move that lets `request` fit with the fewest bytes moved (ties: the lower container
 * index, then the target with the most free); none when the request fits somewhere already,
 * when moves_left is 0, or when no single move makes room. */
cg_defrag_move cg_defrag_pick(const cg_defrag_device *devs, size_t ndev,
                              const cg_defrag_container *cs, size_t nc, cg_bytes request,
                              unsigned moves_left);
/* The same for a request bound to one device (a waiting container's allocation is asked on its
 * own GPU): none when that device takes it now; else the fewest-bytes move of a container on
 * that device to another of its model after which it does. Room elsewhere does not count. */
cg_defrag_move cg_defrag_pick_on(const cg_defrag_device *devs, size_t ndev,
                                 const cg_defrag_container *cs, size_t nc, cg_bytes request,
                                 unsigned device, unsigned moves_left);

/* Read-only views. */
typedef enum { CG_STATE_RUNNING, CG_STATE_SUSPENDED } cg_container_state;

typedef struct {
    cg_cid cid;
    unsigned device;
    cg_bytes limit, assigned, used;
    cg_container_state state;
    cg_time created_at;
    cg_time suspended_since;       /* valid when state == SUSPENDED */
    cg_time total_suspended;       /* completed suspensions + the current one up to `now` */
    unsigned nprocesses, npending;
    cg_bytes pending_bytes;        /* sum of suspended requests */
    cg_bytes limit_waiting;        /* target of a waiting limit raise; 0 when none */
    unsigned compute_pct;          /* 0: no compute limit */
    cg_compute_mode compute_mode;
    unsigned priority;
    bool no_swap, swap_held;
    cg_residency residency;
    cg_bytes swapped;              /* on the host now */
    uint32_t tenant;
    bool exclusive;                /* holds its device alone (exclusive.c) */
    cg_cid gang;                   /* the first member of its gang (gang.c), or CG_CID_NONE */
    bool reserved;                 /* its assignment is its limit, always (gang.c) */
    bool queued;                   /* its gang waits to be admitted (gang.c): assigned 0 */
    bool expired;                  /* its gang was given up after waiting (cg_gang_expire) */
    unsigned util_pct;             /* as created (cg_container_spec); 0: unknown */
    uint64_t app;                  /* as created (cg_container_spec); 0: unknown */
} cg_container_info;

typedef struct {
    cg_bytes total, reserve, capacity, assigned, used, free, context_charge;
    unsigned ncontainers, nsuspended;
    unsigned compute_hard_pct;     /* sum of the admitted hard shares, <= 100 */
    cg_bytes swap_incoming;        /* assignment of its containers on their way out */
    cg_cid exclusive;              /* the exclusive container holding it, or CG_CID_NONE */
} cg_device_info;

typedef struct {
    cg_pid pid;
    cg_bytes used;                 /* includes its context charge */
    unsigned npending;
    cg_bytes swapped;              /* on the host */
} cg_process_info;

/* Host memory the swapped containers hold or may take (those moving out count their whole
 * assignment), node-wide; never above cg_config.swap_limit plus what tenants' holds take
 * (at most swap_hold_pct of it: cg_swap_hold). */
cg_bytes cg_swap_host_bytes(const cg_core *core);

unsigned cg_device_count(const cg_core *core);
cg_status cg_device_get(const cg_core *core, unsigned device, cg_device_info *out);
cg_status cg_container_get(const cg_core *core, cg_cid cid, cg_time now, cg_container_info *out);
/* Iterate live containers in creation order: start with CG_CID_NONE, stop at CG_CID_NONE. */
cg_cid cg_container_next(const cg_core *core, cg_cid after);
/* Processes of a container; returns how many exist, fills up to `cap`. */
size_t cg_container_processes(const cg_core *core, cg_cid cid, cg_process_info *out, size_t cap);
cg_resume_policy cg_get_resume_policy(const cg_core *core);
cg_placement_policy cg_get_placement_policy(const cg_core *core);

/* ---- tenants and fair share (fairshare.c; docs/SCHEDULING.md, "Tenants and fair share") ----
 *
 * Every container belongs to a tenant (cg_container_spec.tenant). A tenant has a weight (1 when
 * never set). The fair-share mode decides each tenant's CEILING on each device, a cap on the sum
 * of the assignments of its containers there:
 *   none      no ceiling (the core as it was, decision for decision);
 *   static    share = capacity x weight / sum of the weights of the tenants ACTIVE on the device
 *             (those with a container there);
 *   adaptive  seed 001's Eq. 1 over the active tenants (job count, and profiled peak memory and
 *             duration once a tenant has CG_FAIR_PROFILE_RUNS runs), times the weight; by job
 *             count alone until cg_fair_share_update has given profiles.
 * ceiling = max(share, the largest limit among the tenant's containers there, the least total
 * that lets all of them finish in the safe order), so a tenant's own claims can always be met
 * (deadlock freedom). A raise that would break the tenant's safety under its ceiling does not
 * happen: a request suspends (CG_WHY_FAIR_SHARE), the resume pass offers less or nothing. */
typedef enum { CG_FAIR_NONE = 0, CG_FAIR_STATIC, CG_FAIR_ADAPTIVE, CG_FAIR__COUNT } cg_fair_mode;
#define CG_TENANT_DEFAULT 0u
#define CG_TENANT_WEIGHT_MAX 1000000
#define CG_FAIR_PROFILE_RUNS 3u      /* runs before a profile counts (001: "first few executions") */

/* "none", "static", "adaptive". */
const char *cg_fair_mode_name(cg_fair_mode m);
bool cg_fair_mode_parse(const char *name, cg_fair_mode *out);

/* weight 1..CG_TENANT_WEIGHT_MAX, else CG_ERR_INVALID and nothing changes. Ceilings that grow
 * resume containers at `now`. */
cg_status cg_tenant_set_weight(cg_core *core, uint32_t tenant, long long weight, cg_time now);
unsigned cg_tenant_weight(const cg_core *core, uint32_t tenant);
cg_status cg_set_fair_share(cg_core *core, cg_fair_mode mode, cg_time now);
cg_fair_mode cg_get_fair_share(const cg_core *core);

/* What the daemon (or the simulator) has learned of a tenant's past runs. */
typedef struct {
    uint32_t tenant;
    unsigned runs;                 /* finished runs the figures below summarise */
    double peak_bytes;             /* mean peak memory per run, > 0 */
    double duration_s;             /* mean run time, > 0 */
} cg_tenant_profile;

/* Algorithm 1's periodic step: replaces the profiles the adaptive mode uses (tenants not listed
 * have none) and re-evaluates every ceiling. A non-finite or non-positive figure, or a tenant
 * listed twice: CG_ERR_INVALID, nothing changes. Harmless in the other modes. */
cg_status cg_fair_share_update(cg_core *core, cg_time now, const cg_tenant_profile *profiles,
                               size_t n);

typedef struct {
    uint32_t tenant;
    unsigned weight;
    unsigned ncontainers, nsuspended;   /* on this device */
    cg_bytes assigned, used;
    cg_bytes share;                /* the fair share alone (capacity in mode none) */
    cg_bytes ceiling;              /* what caps its assignments (capacity in mode none) */
} cg_tenant_info;

/* A tenant's standing on one device; a tenant with no container there has zeros but its
 * weight. */
cg_status cg_tenant_get(const cg_core *core, uint32_t tenant, unsigned device,
                        cg_tenant_info *out);

/* ---- containers on several devices (gang.c; docs/SCHEDULING.md, "Several GPUs") ----
 *
 * A container that uses n devices is n core containers ("members"), one per device, created
 * together from one spec: the limit and the compute share are per device. Each member is
 * RESERVED: it is admitted only with its whole limit free and assigned (A = L) and keeps A = L
 * while it lives (a raise of its limit happens at once or not at all, CG_ERR_NOT_FREE). Why:
 * the per-device banker's argument orders the containers of one device, but a member waiting on
 * device 0 while holding memory on device 1 could close a cycle of waits across devices that no
 * per-device order sees. A reserved member never waits (every request within its limit fits its
 * assignment) and has need 0, so it goes first in every device's safe order; it holds, but never
 * waits, and without hold-and-wait no cycle can form. The price: a gang takes its memory at
 * creation, not as it allocates; one that cannot yet may wait queued, holding nothing
 * (cg_gang_create_or_queue below). Members are never swapped (no_swap), keep the spec's priority
 * and tenant, and are removed one by one with cg_container_remove (the caller removes them all).
 *
 * Create a gang on `devices` (n distinct indexes), or, when devices is NULL, on the n devices
 * cg_place_devices chooses. All or nothing: CG_ERR_NOT_FREE when a device lacks the free memory
 * (or its tenant's fair share the room) for the whole limit, CG_ERR_NO_DEVICE for a bad or
 * repeated index or too few devices, the other statuses of cg_container_create_spec; nothing
 * changes and no event is emitted on failure (but for CG_ERR_NOMEM part way, where the members
 * made so far are removed again: ADMIT/ASSIGN then UNASSIGN/REMOVE). cids_out[i] is the member
 * on devices[i]; the first is the gang's id (cg_container_info.gang). */
cg_status cg_gang_create(cg_core *core, const cg_container_spec *spec, unsigned n,
                         const unsigned *devices, cg_time now, cg_cid *cids_out);
/* The same, but a gang that only lacks free memory now (CG_ERR_NOT_FREE) is created queued
 * instead (*queued = true): its members exist with nothing assigned (A = 0: each goes last in
 * its device's safe order, so creating them keeps every device safe), their requests wait
 * (CG_WHY_GANG), and the gang is admitted all at once, every member A = L, as soon as every
 * one of its devices can take the whole limit safely (checked whenever memory returns on one of
 * them, gangs before the device's other waiters, older gangs first). A queued gang holds no
 * memory, so two queued gangs never wait for each other (docs/SCHEDULING.md, "Several GPUs
 * that wait"). With devices NULL and none fitting now, the n devices that could hold the limit
 * with the most free memory are taken. An exclusive spec is never queued. */
cg_status cg_gang_create_or_queue(cg_core *core, const cg_container_spec *spec, unsigned n,
                                  const unsigned *devices, cg_time now, cg_cid *cids_out,
                                  bool *queued);
/* Gives up every queued gang that has waited max_wait or longer (since its members were
 * created) at `now`: each member's waiting requests are rejected (REJECT, CG_WHY_GANG_EXPIRED),
 * and the gang leaves the queue EXPIRED: it holds nothing and is never admitted, and every later
 * request of its members is rejected at once with the same reason, so nothing is reserved for a
 * container whose processes were already told no. The caller says why and removes it (or its
 * owner does). Writes up to cap given-up gangs' first members to expired_out and returns how
 * many were given up; *next_due (may be NULL) gets the earliest time a gang still queued would
 * be due, or 0 when none is queued. max_wait 0 gives up nothing (no bound). */
unsigned cg_gang_expire(cg_core *core, cg_time now, cg_time max_wait, cg_cid *expired_out,
                        unsigned cap, cg_time *next_due);
/* A daemon restart: re-links members restored with cg_container_restore_spec, first member
 * first: all with assigned = limit (admitted), or all with nothing assigned or used (queued:
 * admitted here at once if they fit now). CG_ERR_INVALID, nothing changed, when one is unknown,
 * already in a gang, partly assigned, swapped, or two share a device. */
cg_status cg_gang_restore(cg_core *core, const cg_cid *cids, unsigned n);

/* Checks every invariant (conservation, bounds, safety, no all-suspended device, index
 * consistency, no suspended container that could safely be given its whole need, shares in
 * range and the hard shares of each device summing to at most 100, an exclusive container alone
 * on its device). Returns NULL
 * when all hold, else a static description of the first violation. Recomputes everything from
 * scratch: O(n log n + k n) for k suspended containers; for tests and debug builds. */
const char *cg_core_check(const cg_core *core);

/* Bytes of memory the core holds now, itself included (the benchmarks divide it by the number
 * of containers and processes). */
size_t cg_core_footprint(const cg_core *core);

/* ---- topology and multi-device placement (topology.c; docs/SCHEDULING.md, "Topology and
 * multi-GPU placement") ----
 *
 * How two devices of the node talk, modelled on NVML's nvmlGpuTopologyLevel_t with NVLink in
 * front, nearest first. Each level has a cost (cg_link_cost) that placement adds up over the
 * pairs of a multi-device container:
 *   NVLINK      1   a direct NVLink (nvidia-smi NV#): several times PCIe's bandwidth
 *   SINGLE      3   one PCIe switch between them (PIX)
 *   MULTIPLE    4   several PCIe switches, no host bridge (PXB)
 *   HOSTBRIDGE  5   through a PCIe host bridge, the CPU's root complex (PHB)
 *   NODE        6   across host bridges inside one NUMA node (NODE)
 *   SYSTEM     10   across the sockets' interconnect (SYS): peer-to-peer is often off, traffic
 *                   bounces through host memory
 * A pair never set is SYSTEM: a topology nobody told the core about promises nothing, so every
 * pair costs the same and the choice is the placement policy's alone, as before topology. */
typedef enum {
    CG_LINK_NVLINK = 0,
    CG_LINK_SINGLE,
    CG_LINK_MULTIPLE,
    CG_LINK_HOSTBRIDGE,
    CG_LINK_NODE,
    CG_LINK_SYSTEM,
    CG_LINK__COUNT
} cg_link;

/* "nvlink", "single", "multiple", "hostbridge", "node", "system"; NULL / false when unknown. */
const char *cg_link_name(cg_link l);
bool cg_link_parse(const char *name, cg_link *out);
/* The cost above; 0 for an unknown level. */
unsigned cg_link_cost(cg_link l);

/* Sets the link between devices a and b, both ways. a == b, a device not added, or an unknown
 * level: CG_ERR_INVALID and nothing changes. */
cg_status cg_topology_set(cg_core *core, unsigned a, unsigned b, cg_link level);
/* The link between a and b; SYSTEM when never set or when a or b is not a device (and for
 * a == b, which is no link). */
cg_link cg_topology_get(const cg_core *core, unsigned a, unsigned b);

/* Chooses n distinct devices for a container that takes spec->limit (and spec's hard compute
 * share) on each: every chosen device has the limit free right now, admits the hard share and
 * is held by no exclusive container (an exclusive spec: only devices with no container, a
 * limit of 0 meaning any). Among the sets that fit, the one with the least sum of pairwise link
 * costs; ties go to the placement policy's preference (binpack: fuller devices first,
 * least-loaded: emptier first, first-fit and the others: lower index first), then to the lowest
 * indexes. n == 1 is GaiaGPU's rule for a fraction of a GPU, whatever the policy: the fullest
 * device that still fits (least fragmentation). Exhaustive over the fitting combinations when
 * there are at most CG_PLACE_EXHAUSTIVE_MAX of them, else greedy (topology.c says how). out[]
 * (room for n) gets the devices in ascending order. spec->device is not consulted.
 * n == 0 or n > CG_MAX_DEVICES, a malformed spec: CG_ERR_INVALID. Fewer than n devices on the
 * node, or fewer than n that fit now: CG_ERR_NO_DEVICE; fewer than n whose capacity could ever
 * hold the limit: CG_ERR_TOO_LARGE. It only chooses: nothing is created or changed. */
#define CG_PLACE_EXHAUSTIVE_MAX 20000u
cg_status cg_place_devices(const cg_core *core, const cg_container_spec *spec, unsigned n,
                           unsigned *out);

/* ---- sharing factor (oversub.c; docs/SCHEDULING.md, "Sharing factor") ----------------------
 *
 * A node may promise its schedulers (kubelet, Slurm) more memory per device than the device has:
 * promised = capacity x F. F changes only what is advertised; every admission rule above stays.
 * `adaptive` derives F per device from past runs: a run's peak against its limit, and the host
 * memory swap may use. Pure: the daemon gathers the runs, the simulator may make its own. */
typedef struct {
    cg_bytes peak;   /* the most the run used on the device */
    cg_bytes limit;  /* its limit there; a run with 0 here or in peak teaches nothing */
} cg_oversub_run;

typedef struct {
    double min_factor;     /* the floor, and F while there is too little evidence */
    double max_factor;     /* the ceiling */
    unsigned min_runs;     /* runs needed before F leaves the floor */
    unsigned quantile_pct; /* which peak/limit ratio stands for the runs (nearest rank) */
    unsigned margin_pct;   /* added to that ratio: peaks above it are what suspension absorbs */
    unsigned swap_pct;     /* percent of the device's swap budget counted as memory */
} cg_oversub_params;

#define CG_OVERSUB_MIN 1.0
#define CG_OVERSUB_MAX 4.0 /* the highest static factor a node may set */
/* The adaptive rule's defaults: 1.0..2.0 (seed 002's factors), 8 runs, p90, 10%, 50%. */
extern const cg_oversub_params cg_oversub_defaults;

/* F = clamp(min, max, (1 + s) / f), where f = min(1, q x (1 + margin)), q the quantile_pct-th
 * percentile of the runs' min(1, peak / limit), and s = swap_pct% of min(swap_budget, capacity)
 * / capacity. Fewer than min_runs usable runs, capacity 0 or a NULL params: min_factor (1.0 for
 * NULL). Order-independent; runs[] is not changed. */
double cg_oversub_adaptive(const cg_oversub_run *runs, size_t n, cg_bytes capacity,
                           cg_bytes swap_budget, const cg_oversub_params *p);
/* capacity x factor, rounded down to whole MiB (never below capacity for factor >= 1). */
cg_bytes cg_oversub_promised(cg_bytes capacity, double factor);

#endif
