/* daemon.h — convgpud's state: devices, containers, connected processes, pending requests.
 *
 * Follow one allocation: an interposed process calls cuMemAlloc_v2; if its ledger slot has
 * quota it charges itself and never reaches here. Otherwise it sends ALLOC on its container's
 * socket (client.c); the daemon freezes the container's quotas so the core sees exact use
 * (decide_freeze), asks the core (src/core), and answers from the core's decision events
 * (decide.c): GRANT/RESUME charge the slot and reply (proc_reply_alloc, proc.c), SUSPEND keeps
 * the request pending, REJECT replies out-of-memory.
 *
 * Invariant kept by the daemon for every container c and process p known to the core:
 *     core's use of p == quota half of p's ledger slot (bytes)
 * so quota handed out is accounted as use, and sum(quota) <= assignment follows from the core's
 * own U <= A. Processes only move the used half, within quota.
 */
#ifndef CONVGPUD_DAEMON_H
#define CONVGPUD_DAEMON_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "core.h"
#include "store.h"
#include "ledger.h"
#include "proc_start.h"
#include "loop.h"
#include "gang.h"
#include "gates.h"
#include "profile.h"
#include "record.h"
#include "rundir.h"
#include "swap.h"
#include "pause.h"
#include "tenant.h"
#include "uidcount.h"
#include "notice.h"
#include "oversub.h"

#define CONTAINER_ID_MAX 64
#define DEVICE_NAME_MAX 96

struct daemon;
struct container;

/* A request waiting for the core's answer (pending.c). */
struct pending {
    uint64_t req;          /* core request id */
    uint64_t msg_id;       /* the client's id, echoed in ALLOC_REPLY */
    uint64_t bytes;
    uint64_t since;        /* monotonic ns */
    /* Not asked of the core yet: other processes of the container keep freed memory that may
     * be what it needs (ledger.h); it goes to the core once they dropped it, or at this
     * deadline (monotonic ns) for one that does not (decide.c). 0: with the core. */
    uint64_t held_until;
    struct proc *proc;
    struct pending *prev, *next;           /* the container's requests, arrival order */
    struct pending *proc_prev, *proc_next; /* the same process's requests */
};

/* A container's requests by request id: open addressing, linear probing. */
struct pending_index {
    struct pending **slots;
    size_t cap;            /* a power of two, or 0 */
    size_t len;
};

struct proc {
    struct container *c;
    int fd;
    pid_t pid;             /* from SO_PEERCRED */
    uid_t uid;
    uint64_t key;          /* the core's process key: unique per connection, never reused */
    uint32_t slot;
    bool welcomed;         /* HELLO answered: owns `slot` */
    bool known_to_core;    /* has made a request, so the core tracks its use */
    uint16_t proto_version; /* its interposer's protocol version (its HELLO's): replies use it */
    uint64_t connected_at;
    struct pending *pending; /* its waiting requests (pending.c) */
    unsigned npending;
    struct proc *next;
};

/* A container is one struct of parts, each declared beside the file that owns its concern:
 * who it is (here, the model's), its owner and start deadline (container.c), its socket
 * (container.c makes it, client.c serves it), its reads' fair share (client.c), its waiting
 * requests (pending.c), its part of the decision round (decide.c), and in their own headers
 * compute (gates.h), swap (swap.h), pause (pause.h), profile (profile.h) and gang (gang.h). */

/* Who a container is and whose: set at creation (or restored), then only read. */
struct container_identity {
    char id[CONTAINER_ID_MAX + 1];
    char name[CONTAINER_ID_MAX + 1];
    char tenant[TENANT_NAME_MAX + 1]; /* its tenant's name (tenant.h) */
    uid_t owner_uid;
    gid_t owner_gid;
    int64_t created_unix;  /* wall clock, seconds */
    uint64_t created_mono; /* monotonic ns: the core's creation time, kept across restarts */
};

/* What ends a container (container.c): its owner's exit, or a start that never came. */
struct container_life {
    pid_t owner_pid;       /* removed when this process exits, if auto_remove */
    pid_t init_pid;        /* the container's init process (host pid), when an integration said */
    int owner_pidfd;       /* -1: none, or polled instead (owner_poll) */
    bool owner_poll;       /* no pidfd on this kernel: the reaper polls the owner's liveness */
    uint64_t owner_start;  /* owner's start time, so a reused pid is not mistaken for it */
    bool auto_remove;
    /* Registered by an integration that reports the container's init (POST .../start) by this
     * wall-clock second, or removed then (a hook or shim killed between the two, a container
     * that never starts): 0 = no deadline, or reported. Stored, so a restart keeps it. */
    int64_t start_by_unix;
    int start_timer_fd;          /* a timerfd armed for start_by_unix, or -1 */
};

/* Where its processes reach the daemon: made by container.c, served by client.c. */
struct container_endpoint {
    char dir[PATH_MAX + 96];       /* DIR/containers/<id>: for clients; the daemon uses dir_fd */
    char sock_path[PATH_MAX + 128];
    int dir_fd;
    int listen_fd;
    uint64_t last_refusal_warning; /* connections refused: logged once a second */
};

/* client.c: the container's fair share of the event loop: messages it may still have read in
 * round `round`. */
struct client_share {
    uint64_t round;
    unsigned budget;
};

/* pending.c: its requests waiting for the core. */
struct pending_queue {
    struct pending *head, *tail;   /* arrival order */
    struct pending_index by_req;
    unsigned n;
};

/* decide.c: the container's part of the decision round. */
struct decide_state {
    bool dirty;            /* a decision touched it: refresh its ledger view, hand out quota */
    struct proc *favored;  /* who gets the quota hand-out: the last process granted */
    struct loop_deferred redecide; /* FREED notices seen this round: re-decide once at its end */
    bool held; /* some of its requests may be held for kept memory (decide.c); a hint, cleared
                * by the next look that finds none */
    uint64_t last_bound_warning;
};

struct container {
    struct daemon *d;
    struct container_identity ident;
    /* What the core knows of it (mirrored) */
    cg_cid cid;
    unsigned device;
    uint64_t limit;
    bool no_swap;                /* created refusing swap: its allocations stay plain */
    /* Why some of its processes run fenced after an upgrade or a downgrade (an interposer or
     * ledger version this daemon cannot adopt: they keep their quotas and cannot grow); "" when
     * none. Shown by inspect as "fenced". */
    char fenced[200];
    struct container_life life;
    struct container_endpoint endpoint;
    int ledger_fd;                 /* a sealed memfd: processes get it in WELCOME */
    struct cg_ledger *ledger;      /* shared with the processes: claims, never trusted */
    struct cg_record *rec;         /* the daemon's own account (record.h) */
    struct proc *procs;
    struct pending_queue pending;  /* waiting requests, arrival order (pending.c) */
    struct client_share share;
    struct decide_state decide;
    uint64_t nvml_used;    /* the watchdog's last reading: NVML's figure for its processes */
    struct compute_state compute; /* measured by gates.c; its share itself is the core's */
    struct swap_state swap;      /* where its memory is (swap.h) */
    struct pause_state pause;    /* checkpointed through the driver (pause.h) */
    struct profile_state profile; /* the key its runs are recorded under (profile.h) */
    struct gang_membership gang; /* its place in a gang of containers on several GPUs (gang.h) */
    struct container *next;
};

/* What makes a new container a gang's member k (gang.c). `cid`: the core's member, already
 * admitted by cg_gang_create (CG_CID_NONE when restoring: the row's assignment is restored). */
struct container_member {
    struct container *leader;
    unsigned index;
    cg_cid cid;
};

struct device {
    char name[DEVICE_NAME_MAX];
    char uuid[DEVICE_NAME_MAX];
    uint64_t total;
    uint64_t context_charge;
    /* The device's utilisation in its last measured interval, 1/1000: filled from NVML by
     * gates.c; 0 where NVML has no per-process utilisation. */
    uint32_t compute_util_permille;
    uint8_t nvlinks[CG_MAX_DEVICES];  /* active NVLinks to each other device (topology.c) */
    double oversub;   /* its sharing factor now: what it advertises, never admits (oversub.h) */
};

struct api_conns;

/* What decide.c asks of swap.c. decide.c is below swap.c (a swap's moves are decided through
 * it), so it reaches swap.c only through these, given at start (d->swap_ops = &swap_for_decide,
 * main.c): the core's orders out and back in come to the decision sink, and the swap-ins are
 * carried out after the core call, before any quota is handed out. */
struct decide_swap_ops {
    void (*carry_out)(struct daemon *d, struct container *c); /* SWAP_OUT: at once */
    void (*mark_in)(struct container *c, uint64_t bytes);     /* SWAP_IN: noted */
    void (*flush)(struct daemon *d);                          /* the noted swap-ins, carried out */
    void (*wake_kept)(struct container *c); /* a request of c waits: wake who keeps memory */
};

/* The daemon's options: one field per row of settings.def, its type from the row's kind (so a
 * setting is written only there), then the values that are not settings. */
struct daemon_options {
#define SETTING(name, arg, def, help, doc, kind) kind;
#define KIND_UINT(field, lo, hi, words) unsigned field
#define KIND_SIZE(field, lo) uint64_t field
#define KIND_BOOL(field) bool field
#define KIND_CUSTOM(type, field, parse, values) type field
#define KIND_STRING(field, size, parse, values) char field[size]
#include "settings.def"
#undef SETTING
#undef KIND_UINT
#undef KIND_SIZE
#undef KIND_BOOL
#undef KIND_CUSTOM
#undef KIND_STRING
    /* Not settings: a flag of the program's own, and what the parsers of settings work out
     * beside their field (settings.c). */
    bool foreground;            /* --foreground: do not detach */
    bool policy_explicit;       /* policy or placement given by flag or configuration file */
    gid_t operators_gid;        /* operators-group's gid (when operators_group is not "") */
    unsigned user_memory_quota_pct; /* user-memory-quota as 1..100%; used when the bytes are 0 */
    bool swap_limit_set;        /* swap-limit given; else half the host's memory when swap is on */
};

struct daemon {
    struct daemon_options opt;
    struct rundir rd;           /* opened and checked at start (rundir.c) */
    struct loop *loop;
    cg_core *core;
    struct device devices[CG_MAX_DEVICES];
    unsigned ndevices;
    char exe_dir[PATH_MAX];     /* where convgpud lives: ../lib has libconvgpu.so */
    char lib_path[PATH_MAX];    /* libconvgpu.so */
    char emu_dir[PATH_MAX];     /* emulator libraries, when emulating */
    char emu_state[PATH_MAX];
    struct container *creating; /* being created: the core's ADMIT/ASSIGN events are about it */
    int64_t creating_start_by;  /* the start deadline of the container being created (api.c) */
    int control_fd;
    int spare_fd;               /* kept open to shed connections when out of descriptors */
    uint64_t last_fd_warning;
    unsigned client_conns;          /* container-socket connections, all containers */
    struct uid_counts client_owners; /* the same per owner (bounded owners only) */
    struct notice_listeners listeners; /* notice.h: who hears what happens */
    const struct decide_swap_ops *swap_ops; /* swap.c's, for decide.c (set at start) */
    const struct api_conns *api_conns; /* the control socket's connections, for /metrics */
    /* Replies decided inside a core call, sent once quotas are handed out (decide_flush), so a
     * granted process finds its next allocation on the fast path. */
    struct reply { struct proc *p; uint64_t msg_id; uint32_t status; } outbox[256];
    unsigned noutbox;
    struct api *api;
    struct metrics *metrics;
    struct nvml *nvml;          /* open for the watchdog */
    struct watchdog *watchdog;
    uint64_t follow_stop_due;     /* monotonic ns: follow_stop_tick's next poll */
#define AUTOMOVE_RING 64
    uint64_t automove_due;        /* monotonic ns: automove_tick's next look */
    uint64_t automove_at[AUTOMOVE_RING]; /* when the last moves started (0: none) */
    unsigned automove_next;       /* the ring's next slot */
    struct compute *compute;    /* measurements and the compute controller (gates.c) */
    struct store *store;
    struct interference_cache *interference; /* seed 003's matrix (interference.h), or NULL */
    struct tenants tenants;     /* tenant.h */
    uint64_t adaptive_due;      /* adaptive.h: when the next update is due (0: now) */
    uint64_t adaptive_last;     /* when the last one ran (0: never) */
    struct oversub_runs *oversub_runs; /* adaptive sharing factor's runs (oversub.c), or NULL */
    struct container *containers; /* creation order */
    uint64_t next_key;
    uint64_t next_req;
    /* Fault injection for tests (CONVGPUD_TEST_CRASH=before-charge:N or after-charge:N): the
     * daemon dies at its Nth grant, after noting it in the slot and before (or right after)
     * charging it, in either case before the reply is sent. 0: off. */
    unsigned long crash_before_charge, crash_after_charge;
    /* swap.c: after the processes' reports reached the core, before the move ends; after a
     * swap-in's quotas and order, before the processes report. */
    unsigned long crash_swap_reported, crash_swap_in_ordered;
    /* pause.c: whether the driver has the checkpoint API (0: not asked yet; 1 yes; 2 no) and
     * the helper's words when it has not. */
    int checkpoint_api;
    char checkpoint_why[256];
    int swap_poll_ms; /* test-only (CONVGPUD_TEST_SWAP_POLL_MS); 0: swap.c's SWAP_POLL_MS */
    uint64_t freed_poll_due; /* monotonic ns: decide_tick's next look for lost FREED notices */
    /* Set by the event sink for the request being decided right now. */
    volatile int stop;
};

/* container.c */
/* What a restarted daemon knows about a container it re-creates (restore.c). */
struct container_restore {
    uint64_t assigned;     /* from the daemon's record, bounded by the limit */
    uint64_t created_mono; /* monotonic ns at first creation (FIFO order) */
    uint64_t owner_start;  /* the auto_remove owner's start time when it was recorded */
    pid_t init_pid;
    int64_t start_by_unix; /* its start deadline when it had not started (0: none) */
    struct cg_record *rec; /* the record, opened (ownership passes to the container) */
    int ledger_fd;         /* the ledger found again in a live process, or -1: a fresh one */
};
/* Creates a container with what spec asks (device, memory limit, compute share, exclusive)
 * whose runs are recorded under profile_key (NULL or "": none) (restore:
 * re-creates one after a restart; the container takes restore's record and ledger, which are
 * then NULL/-1 in *restore; whatever is left there on failure is the caller's). Returns 0, or
 * -EINVAL/-ENODEV (bad request), -EEXIST (id or name taken), -EBUSY (the hard compute share
 * cannot be admitted, or the device is busy or held exclusively), -EIO/-ENOMEM, with err. */
int container_create(struct daemon *d, const char *id, const char *name, const char *profile_key,
                     const cg_container_spec *spec, uid_t uid, gid_t gid, pid_t owner,
                     bool auto_remove, struct container_restore *restore,
                     const struct container_member *member,
                     struct container **out, char *err, size_t errlen);
int container_remove(struct daemon *d, struct container *c, const char *why);
/* Whether a new container may take this id and name (both optional): 0, or -EINVAL (not a
 * name) / -EEXIST (taken), with err. */
int container_names_check(struct daemon *d, const char *id, const char *name, char *err,
                          size_t errlen);
/* Removes the container when process pid exits (pidfd, else polled by the reaper); replaces an
 * earlier owner. start: the start time recorded for pid (0: read it now); a pid that now names
 * another process is refused. Returns 0, or -1 with err. */
int container_watch_owner(struct container *c, pid_t pid, uint64_t start, char *err,
                          size_t errlen);
/* Removes the container at by_unix (wall clock, seconds) unless this is called again before
 * with 0 (its init was reported): the release of a registration whose hook or shim never
 * finished. Stored by the caller. Returns 0, or -1 with err. */
int container_set_start_by(struct container *c, int64_t by_unix, char *err, size_t errlen);
/* True when a polled owner (no pidfd) has exited; the reaper then removes the container. */
bool container_owner_gone(struct container *c);
/* A change of a running container: its memory limit, its compute share, or both, all or
 * nothing. Stored before it is made (store.h). Returns 0 (*pending: a raise of the limit waits
 * for memory), -EINVAL (the core refuses the limit), -EBUSY (the hard share cannot be
 * admitted), or -ENOSPC/-EIO (not stored), with err; nothing changed on error. */
struct container_change {
    bool has_limit;
    uint64_t limit;
    bool has_compute;
    unsigned compute_pct;        /* 0: no compute limit */
    cg_compute_mode compute_mode;
    bool has_priority;
    unsigned priority;           /* 0..CG_PRIORITY_MAX */
};
int container_update(struct daemon *d, struct container *c, const struct container_change *ch,
                     bool *pending, char *err, size_t errlen);

/* model.c: look-ups and readings over the model */
/* By id, or by name (a gang member's id names its gang's leader); NULL when none. */
struct container *container_find(struct daemon *d, const char *id_or_name);
struct container *container_by_cid(struct daemon *d, cg_cid cid);
/* What a container uses now, from its slots; notes it as the record's peak when higher. */
uint64_t container_used_bytes(struct container *c);
/* What the containers on a device use now (from their ledgers). */
uint64_t device_used_bytes(struct daemon *d, unsigned device);
uint64_t proc_used_bytes(struct proc *p);

/* slot.c: a process's account, the ledger word bounded by the daemon's record */
uint64_t slot_used_pages(const struct container *c, uint32_t i);
/* quota := use (at most what was granted); returns the use in bytes. */
uint64_t slot_freeze(struct container *c, uint32_t i);
/* Sets the quota the process may spend without asking (recorded first). */
void slot_set_quota(struct container *c, uint32_t i, uint64_t quota_pages);
/* A grant: the caller raised the record's quota by `pages`; both ledger halves follow. */
void slot_charge(struct container *c, uint32_t i, uint64_t pages);
/* A free slot for pid (its start time read now), or UINT32_MAX. */
uint32_t slot_claim(struct container *c, pid_t pid);
void slot_release(struct container *c, uint32_t i);
/* The daemon handed slot i to this very process (pid, start time) with this generation. */
bool slot_held_by(const struct container *c, uint32_t i, pid_t pid, uint32_t generation);

/* restore.c */
/* Re-creates a stored container after a restart and adopts its live processes (store callback). */
int restore_container(void *ctx, const struct stored_container *sc);
/* Once a second: placeholders of processes that exited while disconnected are dropped. */
void restore_reap(struct daemon *d);

/* proc.c */
/* The process exists and is the one that started at `start` (not a reused pid); false for a
 * start of 0, which names no process. */
bool proc_alive(pid_t pid, uint64_t start);
/* The welcomed process with host pid `pid` in any container, or NULL (the watchdog and the
 * compute measurement map NVML's pids with it). */
struct proc *proc_by_pid(struct daemon *d, pid_t pid);
union cg_msg;
/* Sends m (with fd_to_pass when >= 0) without blocking: 0, or -1 when it did not go whole. */
int proc_send(struct proc *p, const union cg_msg *m, int fd_to_pass);
/* Answers an ALLOC; -1 when the client cannot take it (the caller shuts it down). */
int proc_reply_alloc(struct proc *p, uint64_t msg_id, uint32_t status);

/* client.c */
void client_accept(void *ctx, uint32_t events);
void proc_drop(struct daemon *d, struct proc *p, const char *why);
/* Drops connections that did not say HELLO within the deadline (called once a second). */
void client_reap_silent(struct daemon *d);

/* pending.c: requests waiting for the core, found by id, counted per process and container.
 * An honest process waits on at most one request per thread that allocates; these bounds are far
 * above that and keep what one tenant can make the daemon hold small (docs/OPERATIONS.md). */
#define MAX_PENDING_PER_PROC 256       /* more: the connection is dropped (protocol abuse) */
#define MAX_PENDING_PER_CONTAINER 4096 /* more: the request is answered CANCELLED at once */
/* Adds a request at the end of c's list; NULL when memory is short. */
struct pending *pending_add(struct container *c, struct proc *p, uint64_t req, uint64_t msg_id,
                            uint64_t bytes, uint64_t since);
struct pending *pending_find(struct container *c, uint64_t req);
/* Unlinks the request and hands it to the caller (free() it); NULL when not waiting. */
struct pending *pending_take(struct container *c, uint64_t req);
static inline unsigned pending_count(const struct container *c) { return c->pending.n; }
static inline unsigned pending_count_proc(const struct proc *p) { return p->npending; }
/* Forgets (frees) every request of p, or of the whole container. */
void pending_drop_proc(struct proc *p);
void pending_drop_all(struct container *c);
/* Iteration in arrival order: for (r = c->pending.head; r; r = r->next). */

/* decide.c */
/* Freeze every slot (quota := used) and tell the core the exact use: before any core call
 * that decides on c's use. */
void decide_freeze(struct daemon *d, struct container *c);
/* Hand assignment not covered by quotas to `favored` (may be NULL: first known process). */
void decide_hand_out(struct daemon *d, struct container *c, struct proc *favored);
void decide_sink(void *ctx, const cg_event *ev);
/* Ask the core for `bytes` on behalf of p; replies when decided (maybe later). */
void decide_alloc(struct daemon *d, struct proc *p, uint64_t msg_id, uint64_t bytes);
void decide_freed(struct daemon *d, struct proc *p);
/* Puts c's requests held for kept memory to the core once that memory is dropped, or past
 * their deadline (decide.c). */
void decide_release_held(struct daemon *d, struct container *c);
/* The fallback for lost FREED notices: every 100 ms, re-decides a container with waiters whose
 * slots show a free. Called on every wake-up (costs a comparison until due); returns the ms until
 * it is due again while requests wait, -1 when none does. */
int decide_tick(struct daemon *d);
/* After any core call: refresh the containers decisions touched, then send queued replies. */
void decide_flush(struct daemon *d);

/* gpu.c */
int gpu_discover(struct daemon *d, char *err, size_t errlen);

#endif
