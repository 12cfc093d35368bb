/* store.h — what must survive a daemon restart, kept in SQLite (WAL, synchronous=FULL):
 * containers (id, name, device, limit, compute share, exclusive, profile key, owner, creation
 * order), settings (policies), profiles (the last runs of each job, profile.h) and measured
 * interference (api_interference.h).
 * Per-process use survives in the ledger files themselves (see ledger.h).
 *
 * The control API answers success only for a change the store has taken: callers write first
 * (the row as it will be) and change the daemon's state only when the write returned 0. Every
 * write returns 0 when the change is durable, or -ENOSPC (the disk or the database is full) or
 * -EIO (any other failure) with nothing changed; store_error() says what SQLite said. */
#ifndef CONVGPUD_STORE_H
#define CONVGPUD_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "core.h"

struct store;
struct container;

struct stored_container {
    char id[65];
    char name[65];
    int device;
    uint64_t limit;
    uint64_t assigned;
    uid_t uid;
    gid_t gid;
    pid_t owner_pid;
    uint64_t owner_start; /* its start time (0: recorded by a daemon that did not keep it) */
    pid_t init_pid;
    bool auto_remove;
    int64_t created_unix;
    uint64_t created_mono;
    unsigned compute_pct;          /* 0: no compute limit */
    cg_compute_mode compute_mode;
    unsigned priority;             /* 0..CG_PRIORITY_MAX */
    bool no_swap;
    cg_hold swap_held;             /* held out, and by whom (stored 0, 1 operator, 2 tenant) */
    char tenant[33];               /* "" in a row of an older daemon: the owner's user */
    bool exclusive;                /* holds its device alone */
    char profile_key[256];         /* its runs' profile key ("" = none) */
    char gang[65];                 /* a gang member's leader's id ("" = not a member; gang.c) */
    unsigned member;               /* its index in the gang, 1..; 0 for a leader */
    int64_t start_by_unix;         /* removed then unless its init is reported (0: none) */
    int pause;                     /* enum pause_phase (pause.h); 0 running */
    int pause_from;                /* paused on this device, to be restored on `device`; -1 */
    bool pause_stop;               /* its processes were seen all stopped (--follow-stop): it
                                    * is resumed when they run (follow_stop.h) */
};

struct store *store_open(const char *path, char *err, size_t errlen);
void store_close(struct store *s);
/* The row that describes container c now; a caller about to change c edits a copy and writes
 * it with store_put_row before making the change. */
void store_row_of(const struct container *c, struct stored_container *row);
int store_put_row(struct store *s, const struct stored_container *row);
int store_put_container(struct store *s, const struct container *c);
int store_delete_container(struct store *s, const char *id);
/* For a removal that cannot be refused (the container's owner exited): deletes the row or, if
 * that fails, keeps the id and deletes it before every later write until that succeeds. Returns
 * what the first attempt did. */
int store_delete_container_eventually(struct store *s, const char *id);
/* Calls fn for each stored container in creation order. */
int store_each_container(struct store *s, int (*fn)(void *ctx, const struct stored_container *sc),
                         void *ctx);
int store_set(struct store *s, const char *key, const char *value);
/* Sets n settings in one transaction: all of them, or none. */
int store_set_many(struct store *s, const char *const *keys, const char *const *values, size_t n);
/* Calls fn for each setting whose key starts with prefix (fn's 0 goes on). Returns 0, or -1 when
 * the settings cannot be read. */
int store_each_setting(struct store *s, const char *prefix,
                       int (*fn)(void *ctx, const char *key, const char *value), void *ctx);
/* Copies the value into buf; returns 0 when found, 1 when absent, -1 on error. */
int store_get(struct store *s, const char *key, char *buf, size_t len);
/* Profiles (profile.h). A run is added, its profile's count raised, the runs beyond the
 * window dropped and, while the tenant's profiles are more than max_keys or take more than
 * max_bytes (profile_usage in store.c), its least recently run other profile dropped (*evicted
 * counts them), in one transaction. get: 0 found, 1 absent, -1 error. each: every profile, or
 * those of one tenant (NULL: all), ordered by tenant and key. delete: the profiles named key, of
 * one tenant (NULL: every tenant), runs and all; *deleted says how many (0: none, nothing
 * changed). */
struct profile;
struct profile_run;
int store_profile_add(struct store *s, const struct profile_run *run, unsigned max_keys,
                      uint64_t max_bytes, unsigned *evicted);
int store_profile_get(struct store *s, const char *tenant, const char *key, struct profile *out);
int store_profile_each(struct store *s, const char *tenant,
                       int (*fn)(void *ctx, const struct profile *p), void *ctx);
int store_profile_delete(struct store *s, const char *tenant, const char *key, unsigned *deleted);

/* Measured interference (api_interference.h), rows of one tenant each. put: the rows
 * inserted, or replacing the tenant's rows for the same (foreground, background), in one
 * transaction; when the tenant would then hold more than max_rows rows nothing is changed,
 * *over is set and 0 returned. each: every tenant's rows (tenant NULL) or one tenant's, ordered
 * by tenant, foreground, background; fn's non-zero stops and is returned; -1 when they cannot be
 * read. delete: one tenant's rows (NULL: every tenant's); *deleted says how many. */
struct interference_row;
int store_interference_put(struct store *s, const char *tenant,
                           const struct interference_row *rows, size_t n, unsigned max_rows,
                           bool *over);
int store_interference_each(struct store *s, const char *tenant,
                            int (*fn)(void *ctx, const char *tenant,
                                      const struct interference_row *row),
                            void *ctx);
int store_interference_delete(struct store *s, const char *tenant, unsigned *deleted);

/* The device plugin's allocations (api_alloc.h). add: in one transaction, drops the unclaimed
 * rows created before expire_before, then inserts a unless max_rows rows remain (*full, nothing
 * inserted, 0 returned). get: 0 found, 1 absent, -1 error. claim: records the container that
 * holds it and its pod. */
struct stored_allocation {
    char token[33];
    int kind;                      /* enum alloc_kind */
    uint64_t bytes;                /* memory: the units' bytes */
    int device;                    /* memory: the units' GPU, or -1 (several) */
    unsigned compute;              /* compute: units (1% each) */
    unsigned ndevices;             /* slots: the GPUs */
    unsigned devices[CG_MAX_DEVICES];
    int64_t created_unix;
    char claimed_by[65];           /* the container id that claimed it ("" = unclaimed) */
    char pod[65];                  /* the claimant's pod (sandbox id) */
    int priority;                  /* memory: the operator's priority 0-9, -1 none given */
    bool no_swap, exclusive;       /* memory: the operator's options */
};
int store_alloc_add(struct store *s, const struct stored_allocation *a, unsigned max_rows,
                    int64_t expire_before, bool *full);
int store_alloc_get(struct store *s, const char *token, struct stored_allocation *out);
int store_alloc_claim(struct store *s, const char *token, const char *claimed_by,
                      const char *pod);

/* What SQLite said about the last failed write ("" when none failed). */
const char *store_error(const struct store *s);

#endif
