/* store.c — SQLite persistence of containers and settings (see store.h). Every write is one
 * statement in autocommit mode, or one explicit transaction: with WAL and synchronous=FULL a
 * row is either durable or absent after a crash, never half-written.
 *
 * What a write's result means, on a full disk too: a commit appends its pages to the WAL and
 * fsyncs it, and sqlite3_step (or COMMIT) returns that commit's result. SQLITE_DONE: the change
 * is durable in the WAL (a later checkpoint copies it into state.db; a checkpoint that fails for
 * want of space loses nothing, the WAL stays and is replayed at the next open). SQLITE_FULL:
 * the append failed and the transaction is rolled back, so the caller must not make the change.
 * journal_size_limit stays at SQLite's default (-1): after a checkpoint the WAL keeps its size
 * and is written again from its start, so writes after a checkpoint need no new space; a limit
 * would truncate it and make the next write on a full disk fail. */
#include "store.h"

#include <errno.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core.h"
#include "daemon.h"
#include "log.h"
#include "profile.h"
#include "interference.h"

#define OWED_MAX 1024
#define STMT_CACHE 8

struct store {
    sqlite3 *db;
    char error[256];
    /* The statements of a container's every create, start and removal, compiled once: compiling
     * cost more than running them (a quarter of the daemon's CPU per container went to
     * sqlite3_prepare). Keyed by the address of their SQL, a static string. */
    struct {
        const char *sql;
        sqlite3_stmt *st;
    } cache[STMT_CACHE];
    /* Rows of removed containers that could not be deleted yet (store_delete_container_eventually). */
    char (*owed)[sizeof ((struct stored_container *)0)->id];
    size_t nowed;
};

static const char *schema =
    "PRAGMA journal_mode=WAL;"
    "PRAGMA synchronous=FULL;"
    "CREATE TABLE IF NOT EXISTS containers ("
    "  seq INTEGER PRIMARY KEY AUTOINCREMENT,"
    "  id TEXT NOT NULL UNIQUE, name TEXT NOT NULL, device INTEGER NOT NULL,"
    "  limit_bytes INTEGER NOT NULL, assigned INTEGER NOT NULL, uid INTEGER NOT NULL,"
    "  gid INTEGER NOT NULL, owner_pid INTEGER NOT NULL, auto_remove INTEGER NOT NULL,"
    "  created_unix INTEGER NOT NULL, created_mono INTEGER NOT NULL DEFAULT 0,"
    "  owner_start INTEGER NOT NULL DEFAULT 0, init_pid INTEGER NOT NULL DEFAULT 0,"
    "  compute_pct INTEGER NOT NULL DEFAULT 0, compute_mode TEXT NOT NULL DEFAULT 'elastic',"
    "  priority INTEGER NOT NULL DEFAULT 0, no_swap INTEGER NOT NULL DEFAULT 0,"
    "  swap_held INTEGER NOT NULL DEFAULT 0, tenant TEXT NOT NULL DEFAULT '',"
    "  exclusive INTEGER NOT NULL DEFAULT 0, profile_key TEXT NOT NULL DEFAULT '',"
    "  gang TEXT NOT NULL DEFAULT '', member INTEGER NOT NULL DEFAULT 0,"
    "  start_by INTEGER NOT NULL DEFAULT 0, pause INTEGER NOT NULL DEFAULT 0,"
    "  pause_from INTEGER NOT NULL DEFAULT -1, pause_stop INTEGER NOT NULL DEFAULT 0);"
    "CREATE TABLE IF NOT EXISTS settings (key TEXT PRIMARY KEY, value TEXT NOT NULL);"
    /* The device plugin's allocations (api_alloc.h); devices as "0,2". */
    "CREATE TABLE IF NOT EXISTS allocations ("
    "  token TEXT PRIMARY KEY, kind INTEGER NOT NULL, bytes INTEGER NOT NULL,"
    "  device INTEGER NOT NULL, compute INTEGER NOT NULL, devices TEXT NOT NULL,"
    "  created_unix INTEGER NOT NULL, claimed_by TEXT NOT NULL DEFAULT '',"
    "  pod TEXT NOT NULL DEFAULT '', priority INTEGER NOT NULL DEFAULT -1,"
    "  no_swap INTEGER NOT NULL DEFAULT 0, exclusive INTEGER NOT NULL DEFAULT 0);";

/* Columns added after the first release: a state.db written by an older daemon gets them with
 * their defaults, so an upgrade keeps every container. */
static int add_missing_columns(struct store *s, char *err, size_t errlen)
{
    static const char *const added[][3] = {
        {"containers", "created_mono", "INTEGER NOT NULL DEFAULT 0"},
        {"containers", "owner_start", "INTEGER NOT NULL DEFAULT 0"},
        {"containers", "init_pid", "INTEGER NOT NULL DEFAULT 0"},
        {"containers", "compute_pct", "INTEGER NOT NULL DEFAULT 0"},     /* compute shares (issue 17) */
        {"containers", "compute_mode", "TEXT NOT NULL DEFAULT 'elastic'"},
        {"containers", "priority", "INTEGER NOT NULL DEFAULT 0"},        /* swap and priorities (issue 20) */
        {"containers", "no_swap", "INTEGER NOT NULL DEFAULT 0"},
        {"containers", "swap_held", "INTEGER NOT NULL DEFAULT 0"},
        {"containers", "tenant", "TEXT NOT NULL DEFAULT ''"},            /* tenants (issue 21) */
        {"containers", "exclusive", "INTEGER NOT NULL DEFAULT 0"},       /* exclusive containers (issue 21) */
        {"containers", "profile_key", "TEXT NOT NULL DEFAULT ''"},       /* profiles (issue 21) */
        {"containers", "gang", "TEXT NOT NULL DEFAULT ''"},              /* several GPUs (issue 22) */
        {"containers", "member", "INTEGER NOT NULL DEFAULT 0"},
        {"containers", "start_by", "INTEGER NOT NULL DEFAULT 0"},        /* start deadlines (issue 42) */
        {"containers", "pause", "INTEGER NOT NULL DEFAULT 0"},           /* pause and move (issue 38) */
        {"containers", "pause_from", "INTEGER NOT NULL DEFAULT -1"},
        {"containers", "pause_stop", "INTEGER NOT NULL DEFAULT 0"},      /* --follow-stop's (issue 38) */
        /* The device plugin's operator options on its allocations (issue 41). */
        {"allocations", "priority", "INTEGER NOT NULL DEFAULT -1"},
        {"allocations", "no_swap", "INTEGER NOT NULL DEFAULT 0"},
        {"allocations", "exclusive", "INTEGER NOT NULL DEFAULT 0"},
    };
    for (size_t i = 0; i < sizeof added / sizeof added[0]; i++) {
        sqlite3_stmt *st;
        char sql[200];
        snprintf(sql, sizeof sql, "SELECT 1 FROM pragma_table_info('%s') WHERE name='%s'",
                 added[i][0], added[i][1]);
        if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) != SQLITE_OK) {
            snprintf(err, errlen, "cannot read the schema: %s", sqlite3_errmsg(s->db));
            return -1;
        }
        bool present = sqlite3_step(st) == SQLITE_ROW;
        sqlite3_finalize(st);
        if (present)
            continue;
        snprintf(sql, sizeof sql, "ALTER TABLE %s ADD COLUMN %s %s", added[i][0], added[i][1],
                 added[i][2]);
        char *msg = NULL;
        if (sqlite3_exec(s->db, sql, NULL, NULL, &msg) != SQLITE_OK) {
            snprintf(err, errlen, "cannot upgrade the schema (%s.%s): %s", added[i][0],
                     added[i][1], msg ? msg : "?");
            sqlite3_free(msg);
            return -1;
        }
        log_info("store: upgraded: column %s added%s%s", added[i][1],
                 strcmp(added[i][0], "containers") ? " to " : "",
                 strcmp(added[i][0], "containers") ? added[i][0] : "");
    }
    return 0;
}

static void rollback(struct store *s);

/* Schema versions (PRAGMA user_version) for what columns cannot express: 0, every release before
 * profiles; 1, the profile tables; 2, the interference table. Each step is one transaction with
 * its version bump, so a crash leaves the file at one version or the next, never between. */
static const char *const migrations[] = {
    /* 0 -> 1: profiles (profile.h). A run's utilisation is NULL when it was not measured, so
     * AVG() leaves it out. */
    "CREATE TABLE IF NOT EXISTS profile ("
    "  tenant TEXT NOT NULL, key TEXT NOT NULL, runs INTEGER NOT NULL,"
    "  last_unix INTEGER NOT NULL, PRIMARY KEY (tenant, key));"
    "CREATE TABLE IF NOT EXISTS profile_run ("
    "  seq INTEGER PRIMARY KEY AUTOINCREMENT, tenant TEXT NOT NULL, key TEXT NOT NULL,"
    "  peak INTEGER NOT NULL, duration_ns INTEGER NOT NULL, util_permille INTEGER,"
    "  ended_unix INTEGER NOT NULL);"
    "CREATE INDEX IF NOT EXISTS profile_run_by_key ON profile_run (tenant, key, seq);",
    /* 1 -> 2: measured interference (api_interference.h): one row per tenant and ordered pair
     * of profile keys, replaced when the pair is measured again. */
    "CREATE TABLE IF NOT EXISTS interference ("
    "  tenant TEXT NOT NULL, foreground TEXT NOT NULL, background TEXT NOT NULL,"
    "  slowdown REAL NOT NULL, runs INTEGER NOT NULL, measured_unix INTEGER NOT NULL,"
    "  PRIMARY KEY (tenant, foreground, background));",
};

/* fresh: the file had no tables before this daemon: its steps create the schema, they upgrade
 * nothing, and the log says so once. */
static int migrate(struct store *s, bool fresh, char *err, size_t errlen)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(s->db, "PRAGMA user_version", -1, &st, NULL) != SQLITE_OK) {
        snprintf(err, errlen, "cannot read the schema version: %s", sqlite3_errmsg(s->db));
        return -1;
    }
    int version = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int(st, 0) : -1;
    sqlite3_finalize(st);
    int latest = (int)(sizeof migrations / sizeof migrations[0]);
    if (version < 0 || version > latest) {
        snprintf(err, errlen, "state.db has schema version %d; this convgpud knows 0 to %d "
                              "(written by a newer version?)", version, latest);
        return -1;
    }
    for (; version < latest; version++) {
        char bump[48];
        snprintf(bump, sizeof bump, "PRAGMA user_version=%d", version + 1);
        char *msg = NULL;
        if (sqlite3_exec(s->db, "BEGIN IMMEDIATE", NULL, NULL, &msg) != SQLITE_OK ||
            sqlite3_exec(s->db, migrations[version], NULL, NULL, &msg) != SQLITE_OK ||
            sqlite3_exec(s->db, bump, NULL, NULL, &msg) != SQLITE_OK ||
            sqlite3_exec(s->db, "COMMIT", NULL, NULL, &msg) != SQLITE_OK) {
            snprintf(err, errlen, "cannot upgrade the schema to version %d: %s", version + 1,
                     msg ? msg : sqlite3_errmsg(s->db));
            sqlite3_free(msg);
            rollback(s);
            return -1;
        }
        if (!fresh)
            log_info("store: upgraded to schema version %d", version + 1);
    }
    if (fresh)
        log_info("store: new state.db, schema version %d", latest);
    return 0;
}

struct store *store_open(const char *path, char *err, size_t errlen)
{
    struct store *s = calloc(1, sizeof *s);
    if (!s) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    /* Container ids, names, owners and limits are nobody else's business: create the file
     * owner-only before SQLite does (its journal files take the same mode). */
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd >= 0) {
        if (fchmod(fd, 0600) != 0)
            log_warn("store: cannot make %s private", path);
        close(fd);
    }
    if (sqlite3_open_v2(path, &s->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE |
                                          SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK) {
        snprintf(err, errlen, "cannot open %s: %s", path, s->db ? sqlite3_errmsg(s->db) : "?");
        store_close(s);
        return NULL;
    }
    sqlite3_busy_timeout(s->db, 2000);
    sqlite3_stmt *probe;
    bool fresh = false;
    if (sqlite3_prepare_v2(s->db, "SELECT count(*) FROM sqlite_master", -1, &probe, NULL) ==
        SQLITE_OK) {
        fresh = sqlite3_step(probe) == SQLITE_ROW && sqlite3_column_int(probe, 0) == 0;
        sqlite3_finalize(probe);
    }
    char *msg = NULL;
    if (sqlite3_exec(s->db, schema, NULL, NULL, &msg) != SQLITE_OK) {
        snprintf(err, errlen, "cannot initialise %s: %s", path, msg ? msg : "?");
        sqlite3_free(msg);
        store_close(s);
        return NULL;
    }
    if (add_missing_columns(s, err, errlen) != 0 || migrate(s, fresh, err, errlen) != 0) {
        store_close(s);
        return NULL;
    }
    return s;
}

void store_close(struct store *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < STMT_CACHE; i++)
        sqlite3_finalize(s->cache[i].st);
    sqlite3_close(s->db);
    free(s->owed);
    free(s);
}

const char *store_error(const struct store *s)
{
    return s->error;
}

/* Records why a write failed and says how: -ENOSPC when the disk or the database is full
 * (SQLite reports a short write for want of space as SQLITE_FULL), else -EIO. */
static int failed(struct store *s, int rc, const char *what)
{
    int sys = sqlite3_system_errno(s->db);
    snprintf(s->error, sizeof s->error, "%s: %s", what, sqlite3_errmsg(s->db));
    log_error("store: %s", s->error);
    return (rc & 0xff) == SQLITE_FULL || sys == ENOSPC || sys == EDQUOT ? -ENOSPC : -EIO;
}

/* sqlite3_prepare_v2 for a hot statement: the compiled one is kept and handed out again. */
static int prepare_kept(struct store *s, const char *sql, sqlite3_stmt **st)
{
    size_t i;
    for (i = 0; i < STMT_CACHE && s->cache[i].sql; i++)
        if (s->cache[i].sql == sql) {
            *st = s->cache[i].st;
            return SQLITE_OK;
        }
    int rc = sqlite3_prepare_v3(s->db, sql, -1, i < STMT_CACHE ? SQLITE_PREPARE_PERSISTENT : 0,
                                st, NULL);
    if (rc == SQLITE_OK && i < STMT_CACHE) {
        s->cache[i].sql = sql;
        s->cache[i].st = *st;
    }
    return rc;
}

/* Done with a statement: a kept one is reset for its next use (which also ends the read it
 * may hold), any other finalized. */
static void done(struct store *s, sqlite3_stmt *st)
{
    for (size_t i = 0; i < STMT_CACHE && s->cache[i].sql; i++)
        if (s->cache[i].st == st) {
            sqlite3_reset(st);
            sqlite3_clear_bindings(st);
            return;
        }
    sqlite3_finalize(st);
}

/* Runs a prepared write to its end and is done with it (done()). */
static int run(struct store *s, sqlite3_stmt *st, const char *what);

/* Runs a statement whose parameters bound (`bound`), else finalizes it and says so. */
static int run_bound(struct store *s, sqlite3_stmt *st, bool bound, const char *what)
{
    if (bound)
        return run(s, st, what);
    done(s, st);
    return failed(s, SQLITE_ERROR, what);
}

static int run(struct store *s, sqlite3_stmt *st, const char *what)
{
    int rc = sqlite3_step(st);
    done(s, st);
    return rc == SQLITE_DONE ? 0 : failed(s, rc, what);
}

static int exec(struct store *s, const char *sql)
{
    int rc = sqlite3_exec(s->db, sql, NULL, NULL, NULL);
    return rc == SQLITE_OK ? 0 : failed(s, rc, sql);
}

/* Leaves no transaction open after a failure (SQLite may or may not have rolled it back). */
static void rollback(struct store *s)
{
    if (!sqlite3_get_autocommit(s->db) &&
        sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL) != SQLITE_OK)
        log_error("store: rollback: %s", sqlite3_errmsg(s->db));
}

static int delete_row(struct store *s, const char *id)
{
    sqlite3_stmt *st;
    static const char *sql = "DELETE FROM containers WHERE id=?1";
    int rc = prepare_kept(s, sql, &st);
    if (rc != SQLITE_OK)
        return failed(s, rc, "cannot delete a container");
    if ((rc = sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC)) != SQLITE_OK) {
        done(s, st);
        return failed(s, rc, "cannot delete a container");
    }
    char what[128];
    snprintf(what, sizeof what, "cannot delete container %s", id);
    return run(s, st, what);
}

/* Deletes the rows a removal owes before anything else is written; 0 when none is left. */
static int settle_owed(struct store *s)
{
    size_t kept = 0;
    for (size_t i = 0; i < s->nowed; i++) {
        if (delete_row(s, s->owed[i]) == 0)
            log_info("store: container %s: row deleted (owed since its removal)", s->owed[i]);
        else
            memmove(s->owed[kept++], s->owed[i], sizeof s->owed[i]);
    }
    s->nowed = kept;
    return kept ? -1 : 0;
}

static bool is_owed(const struct store *s, const char *id)
{
    for (size_t i = 0; i < s->nowed; i++)
        if (strcmp(s->owed[i], id) == 0)
            return true;
    return false;
}

void store_row_of(const struct container *c, struct stored_container *r)
{
    memset(r, 0, sizeof *r);
    cg_container_info ci = {0};
    cg_container_get(c->d->core, c->cid, loop_now_ns(), &ci);
    snprintf(r->id, sizeof r->id, "%s", c->ident.id);
    snprintf(r->name, sizeof r->name, "%s", c->ident.name);
    r->device = (int)c->device;
    r->limit = c->limit;
    r->assigned = ci.assigned;
    r->uid = c->ident.owner_uid;
    r->gid = c->ident.owner_gid;
    r->owner_pid = c->life.owner_pid;
    r->owner_start = c->life.owner_start;
    r->init_pid = c->life.init_pid;
    r->auto_remove = c->life.auto_remove;
    r->created_unix = c->ident.created_unix;
    r->created_mono = c->ident.created_mono;
    r->compute_pct = ci.compute_pct;
    r->compute_mode = ci.compute_mode;
    r->priority = ci.priority;
    r->no_swap = ci.no_swap;
    r->swap_held = cg_swap_hold_of(c->d->core, c->cid);
    snprintf(r->tenant, sizeof r->tenant, "%s", c->ident.tenant);
    r->exclusive = ci.exclusive;
    snprintf(r->profile_key, sizeof r->profile_key, "%s", c->profile.key);
    if (c->gang.leader) {
        snprintf(r->gang, sizeof r->gang, "%s", c->gang.leader->ident.id);
        r->member = c->gang.member_index;
    }
    r->start_by_unix = c->life.start_by_unix;
    r->pause = (int)c->pause.phase;
    r->pause_from = c->pause.moved ? (int)c->pause.from_dev : -1;
    r->pause_stop = c->pause.stop_seen;
}

int store_put_row(struct store *s, const struct stored_container *r)
{
    /* A row still owed a delete holds an older container of the same id: the upsert below
     * would keep its name and owner. */
    if (settle_owed(s) != 0 && is_owed(s, r->id)) {
        snprintf(s->error, sizeof s->error, "cannot replace the stale row of container %s", r->id);
        return -ENOSPC;
    }
    /* Upsert keeps the original seq, so creation order survives limit changes. */
    static const char *sql =
        "INSERT INTO containers (id, name, device, limit_bytes, assigned, uid, gid, owner_pid,"
        " auto_remove, created_unix, created_mono, owner_start, init_pid, compute_pct,"
        " compute_mode, priority, no_swap, swap_held, tenant, exclusive, profile_key, gang,"
        " member, start_by, pause, pause_from, pause_stop)"
        " VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13,?14,?15,?16,?17,?18,?19,?20,?21,"
        "?22,?23,?24,?25,?26,?27)"
        " ON CONFLICT(id) DO UPDATE SET limit_bytes=excluded.limit_bytes,"
        " assigned=excluded.assigned, owner_pid=excluded.owner_pid,"
        " auto_remove=excluded.auto_remove, owner_start=excluded.owner_start,"
        " init_pid=excluded.init_pid, compute_pct=excluded.compute_pct,"
        " compute_mode=excluded.compute_mode, priority=excluded.priority,"
        " no_swap=excluded.no_swap, swap_held=excluded.swap_held, tenant=excluded.tenant,"
        " start_by=excluded.start_by, device=excluded.device, pause=excluded.pause,"
        " pause_from=excluded.pause_from, pause_stop=excluded.pause_stop";
    char what[128];
    snprintf(what, sizeof what, "cannot save container %s", r->id);
    sqlite3_stmt *st;
    int rc = prepare_kept(s, sql, &st);
    if (rc != SQLITE_OK)
        return failed(s, rc, what);
    int b = sqlite3_bind_text(st, 1, r->id, -1, SQLITE_STATIC);
    b |= sqlite3_bind_text(st, 2, r->name, -1, SQLITE_STATIC);
    b |= sqlite3_bind_int(st, 3, r->device);
    b |= sqlite3_bind_int64(st, 4, (sqlite3_int64)r->limit);
    b |= sqlite3_bind_int64(st, 5, (sqlite3_int64)r->assigned);
    b |= sqlite3_bind_int64(st, 6, (sqlite3_int64)r->uid);
    b |= sqlite3_bind_int64(st, 7, (sqlite3_int64)r->gid);
    b |= sqlite3_bind_int64(st, 8, (sqlite3_int64)r->owner_pid);
    b |= sqlite3_bind_int(st, 9, r->auto_remove);
    b |= sqlite3_bind_int64(st, 10, r->created_unix);
    b |= sqlite3_bind_int64(st, 11, (sqlite3_int64)r->created_mono);
    b |= sqlite3_bind_int64(st, 12, (sqlite3_int64)r->owner_start);
    b |= sqlite3_bind_int64(st, 13, (sqlite3_int64)r->init_pid);
    b |= sqlite3_bind_int64(st, 14, (sqlite3_int64)r->compute_pct);
    b |= sqlite3_bind_text(st, 15, cg_compute_mode_name(r->compute_mode), -1, SQLITE_STATIC);
    b |= sqlite3_bind_int(st, 16, (int)r->priority);
    b |= sqlite3_bind_int(st, 17, r->no_swap);
    b |= sqlite3_bind_int(st, 18, (int)r->swap_held);
    b |= sqlite3_bind_text(st, 19, r->tenant, -1, SQLITE_STATIC);
    b |= sqlite3_bind_int(st, 20, r->exclusive);
    b |= sqlite3_bind_text(st, 21, r->profile_key, -1, SQLITE_STATIC);
    b |= sqlite3_bind_text(st, 22, r->gang, -1, SQLITE_STATIC);
    b |= sqlite3_bind_int(st, 23, (int)r->member);
    b |= sqlite3_bind_int64(st, 24, r->start_by_unix);
    b |= sqlite3_bind_int(st, 25, r->pause);
    b |= sqlite3_bind_int(st, 26, r->pause_from);
    b |= sqlite3_bind_int(st, 27, r->pause_stop);
    if (b != SQLITE_OK) {
        done(s, st);
        return failed(s, SQLITE_ERROR, what);
    }
    return run(s, st, what);
}

int store_put_container(struct store *s, const struct container *c)
{
    struct stored_container r;
    store_row_of(c, &r);
    return store_put_row(s, &r);
}

int store_delete_container(struct store *s, const char *id)
{
    settle_owed(s);
    return delete_row(s, id);
}

int store_delete_container_eventually(struct store *s, const char *id)
{
    int rc = store_delete_container(s, id);
    if (rc == 0 || is_owed(s, id))
        return rc;
    if (!s->owed)
        s->owed = calloc(OWED_MAX, sizeof *s->owed);
    if (!s->owed || s->nowed == OWED_MAX) {
        log_error("store: container %s: too many rows owed a delete; this one stays until the "
                  "next start drops it", id);
        return rc;
    }
    snprintf(s->owed[s->nowed++], sizeof s->owed[0], "%s", id);
    return rc;
}

int store_each_container(struct store *s, int (*fn)(void *ctx, const struct stored_container *sc),
                         void *ctx)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(s->db,
                           "SELECT id, name, device, limit_bytes, assigned, uid, gid, owner_pid,"
                           " auto_remove, created_unix, created_mono, owner_start, init_pid,"
                           " compute_pct, compute_mode, priority, no_swap, swap_held, tenant,"
                           " exclusive, profile_key, gang, member, start_by, pause, pause_from,"
                           " pause_stop FROM containers"
                           " ORDER BY seq",
                           -1, &st, NULL) != SQLITE_OK)
        return -1;
    int rc, result = 0;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        struct stored_container sc = {0};
        const unsigned char *id = sqlite3_column_text(st, 0);
        const unsigned char *name = sqlite3_column_text(st, 1);
        snprintf(sc.id, sizeof sc.id, "%s", id ? (const char *)id : "");
        snprintf(sc.name, sizeof sc.name, "%s", name ? (const char *)name : "");
        sc.device = sqlite3_column_int(st, 2);
        sc.limit = (uint64_t)sqlite3_column_int64(st, 3);
        sc.assigned = (uint64_t)sqlite3_column_int64(st, 4);
        sc.uid = (uid_t)sqlite3_column_int64(st, 5);
        sc.gid = (gid_t)sqlite3_column_int64(st, 6);
        sc.owner_pid = (pid_t)sqlite3_column_int64(st, 7);
        sc.auto_remove = sqlite3_column_int(st, 8) != 0;
        sc.created_unix = sqlite3_column_int64(st, 9);
        sc.created_mono = (uint64_t)sqlite3_column_int64(st, 10);
        sc.owner_start = (uint64_t)sqlite3_column_int64(st, 11);
        sc.init_pid = (pid_t)sqlite3_column_int64(st, 12);
        /* Our own file, still read as input: a share out of range or an unknown mode is
         * dropped (with a word) rather than handed to the core. */
        sqlite3_int64 pct = sqlite3_column_int64(st, 13);
        const unsigned char *mode = sqlite3_column_text(st, 14);
        if (pct < 0 || pct > CG_COMPUTE_PCT_MAX ||
            !cg_compute_mode_parse(mode ? (const char *)mode : "", &sc.compute_mode)) {
            if (pct != 0)
                log_warn("store: container %s: compute share %lld%% %s unreadable; restored "
                         "without one", sc.id, (long long)pct, mode ? (const char *)mode : "?");
            pct = 0;
            sc.compute_mode = CG_COMPUTE_ELASTIC;
        }
        sc.compute_pct = (unsigned)pct;
        sqlite3_int64 prio = sqlite3_column_int64(st, 15);
        if (prio < 0 || prio > CG_PRIORITY_MAX) {
            log_warn("store: container %s: priority %lld unreadable; restored with 0", sc.id,
                     (long long)prio);
            prio = 0;
        }
        sc.priority = (unsigned)prio;
        sc.no_swap = sqlite3_column_int(st, 16) != 0;
        /* 2: a tenant's own hold (counted in the hold pool); any other non-zero value, as an
         * older daemon wrote it, the operator's. */
        int held = sqlite3_column_int(st, 17);
        sc.swap_held = held == 0 ? CG_HOLD_NONE : held == 2 ? CG_HOLD_TENANT : CG_HOLD_OPERATOR;
        /* A tenant name that is not one (an edited state.db) is dropped: the owner's is used. */
        const unsigned char *tenant = sqlite3_column_text(st, 18);
        if (tenant && strlen((const char *)tenant) < sizeof sc.tenant)
            snprintf(sc.tenant, sizeof sc.tenant, "%s", (const char *)tenant);
        sc.exclusive = sqlite3_column_int(st, 19) != 0;
        const unsigned char *key = sqlite3_column_text(st, 20);
        if (key && key[0] && !cg_profile_key_valid((const char *)key)) {
            log_warn("store: container %s: profile key unreadable; its runs are not recorded",
                     sc.id);
            key = NULL;
        }
        snprintf(sc.profile_key, sizeof sc.profile_key, "%s", key ? (const char *)key : "");
        const unsigned char *gang = sqlite3_column_text(st, 21);
        sqlite3_int64 member = sqlite3_column_int64(st, 22);
        if (gang && gang[0] && (strlen((const char *)gang) >= sizeof sc.gang || member < 1 ||
                                member >= CG_MAX_DEVICES)) {
            log_warn("store: container %s: gang membership unreadable; restored on its own",
                     sc.id);
            gang = NULL;
        }
        if (gang && gang[0]) {
            snprintf(sc.gang, sizeof sc.gang, "%s", (const char *)gang);
            sc.member = (unsigned)member;
        }
        sqlite3_int64 start_by = sqlite3_column_int64(st, 23);
        sc.start_by_unix = start_by > 0 ? start_by : 0;
        /* Our own file, still read as input: an unknown phase or device is no pause. */
        int phase = sqlite3_column_int(st, 24), from = sqlite3_column_int(st, 25);
        sc.pause = phase >= 0 && phase <= 3 ? phase : 0;
        sc.pause_from = from >= 0 && from < CG_MAX_DEVICES ? from : -1;
        sc.pause_stop = sc.pause != 0 && sqlite3_column_int(st, 26) != 0;
        if (fn(ctx, &sc) != 0)
            result = -1;
    }
    done(s, st);
    return rc == SQLITE_DONE ? result : -1;
}

static int set_one(struct store *s, const char *key, const char *value)
{
    char what[128];
    snprintf(what, sizeof what, "cannot save setting %s", key);
    sqlite3_stmt *st;
    int rc = sqlite3_prepare_v2(s->db, "INSERT OR REPLACE INTO settings (key, value) VALUES (?1, ?2)",
                                -1, &st, NULL);
    if (rc != SQLITE_OK)
        return failed(s, rc, what);
    if (sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC) != SQLITE_OK ||
        sqlite3_bind_text(st, 2, value, -1, SQLITE_STATIC) != SQLITE_OK) {
        done(s, st);
        return failed(s, SQLITE_ERROR, what);
    }
    return run(s, st, what);
}

int store_set(struct store *s, const char *key, const char *value)
{
    return store_set_many(s, &key, &value, 1);
}

int store_set_many(struct store *s, const char *const *keys, const char *const *values, size_t n)
{
    settle_owed(s);
    if (n == 1)
        return set_one(s, keys[0], values[0]);
    int rc = exec(s, "BEGIN IMMEDIATE");
    for (size_t i = 0; rc == 0 && i < n; i++)
        rc = set_one(s, keys[i], values[i]);
    if (rc == 0)
        rc = exec(s, "COMMIT");
    if (rc != 0)
        rollback(s);
    return rc;
}

int store_each_setting(struct store *s, const char *prefix,
                       int (*fn)(void *ctx, const char *key, const char *value), void *ctx)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(s->db, "SELECT key, value FROM settings WHERE substr(key, 1, ?2) = ?1"
                                  " ORDER BY key", -1, &st, NULL) != SQLITE_OK)
        return -1;
    sqlite3_bind_text(st, 1, prefix, -1, SQLITE_STATIC);
    sqlite3_bind_int(st, 2, (int)strlen(prefix));
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        const unsigned char *k = sqlite3_column_text(st, 0), *v = sqlite3_column_text(st, 1);
        if (k && v && fn(ctx, (const char *)k, (const char *)v) != 0)
            break;
    }
    done(s, st);
    return rc == SQLITE_DONE || rc == SQLITE_ROW ? 0 : -1;
}

int store_get(struct store *s, const char *key, char *buf, size_t len)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(s->db, "SELECT value FROM settings WHERE key=?1", -1, &st, NULL) !=
        SQLITE_OK)
        return -1;
    sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
    int rc = sqlite3_step(st), result = 1;
    if (rc == SQLITE_ROW) {
        const unsigned char *v = sqlite3_column_text(st, 0);
        snprintf(buf, len, "%s", v ? (const char *)v : "");
        result = 0;
    } else if (rc != SQLITE_DONE) {
        result = -1;
    }
    done(s, st);
    return result;
}

/* ---- profiles ----------------------------------------------------------------------------- */

/* Binds text parameters 1..n (NULL binds SQL NULL); false when one could not be bound. */
static bool bind_texts(sqlite3_stmt *st, const char *const *v, int n)
{
    for (int i = 0; i < n; i++)
        if ((v[i] ? sqlite3_bind_text(st, i + 1, v[i], -1, SQLITE_STATIC)
                  : sqlite3_bind_null(st, i + 1)) != SQLITE_OK)
            return false;
    return true;
}

/* Prepares sql, binds the texts and runs it to its end. */
static int write_texts(struct store *s, const char *sql, const char *const *v, int n,
                       const char *what)
{
    sqlite3_stmt *st;
    int rc = sqlite3_prepare_v2(s->db, sql, -1, &st, NULL);
    if (rc != SQLITE_OK)
        return failed(s, rc, what);
    if (!bind_texts(st, v, n)) {
        done(s, st);
        return failed(s, SQLITE_ERROR, what);
    }
    return run(s, st, what);
}

/* What tenant's profiles take: how many, and their bytes as PROFILE_ROW_BYTES per row plus
 * the text of the tenant and the key in each (the profile's row and every run's). */
static int profile_usage(struct store *s, const char *tenant, unsigned *count, uint64_t *bytes)
{
    char sql[512];
    snprintf(sql, sizeof sql,
             "SELECT COUNT(*), COALESCE(SUM((1 + (SELECT COUNT(*) FROM profile_run r"
             " WHERE r.tenant = p.tenant AND r.key = p.key)) * (length(CAST(p.tenant AS BLOB))"
             " + length(CAST(p.key AS BLOB)) + %d)), 0) FROM profile p WHERE p.tenant = ?1",
             PROFILE_ROW_BYTES);
    sqlite3_stmt *st;
    int rc = sqlite3_prepare_v2(s->db, sql, -1, &st, NULL);
    if (rc != SQLITE_OK)
        return failed(s, rc, "cannot measure a tenant's profiles");
    const char *const v[] = {tenant};
    rc = bind_texts(st, v, 1) ? sqlite3_step(st) : SQLITE_ERROR;
    if (rc == SQLITE_ROW) {
        sqlite3_int64 n = sqlite3_column_int64(st, 0), b = sqlite3_column_int64(st, 1);
        *count = n > 0 ? (unsigned)n : 0;
        *bytes = b > 0 ? (uint64_t)b : 0;
    }
    done(s, st);
    return rc == SQLITE_ROW ? 0 : failed(s, rc, "cannot measure a tenant's profiles");
}

/* Drops the tenant's profiles beyond max_keys or max_bytes, the least recently run first,
 * never `keep` (the one just recorded). Inside a transaction. */
static int profile_bound(struct store *s, const char *tenant, const char *keep, unsigned max_keys,
                         uint64_t max_bytes, unsigned *evicted)
{
    const char *what = "cannot drop an old profile";
    for (;;) {
        unsigned n = 0;
        uint64_t bytes = 0;
        int rc = profile_usage(s, tenant, &n, &bytes);
        if (rc != 0 || (n <= max_keys && bytes <= max_bytes))
            return rc;
        sqlite3_stmt *st;
        /* Runs' seq only grows: the profile whose latest run is the oldest (none: first). */
        rc = sqlite3_prepare_v2(s->db, "SELECT p.key FROM profile p WHERE p.tenant = ?1 AND"
                                       " p.key <> ?2 ORDER BY (SELECT MAX(r.seq) FROM profile_run r"
                                       " WHERE r.tenant = p.tenant AND r.key = p.key), p.rowid"
                                       " LIMIT 1", -1, &st, NULL);
        if (rc != SQLITE_OK)
            return failed(s, rc, what);
        const char *const tk[] = {tenant, keep};
        char oldest[PROFILE_KEY_MAX + 1] = "";
        rc = bind_texts(st, tk, 2) ? sqlite3_step(st) : SQLITE_ERROR;
        if (rc == SQLITE_ROW && sqlite3_column_text(st, 0))
            snprintf(oldest, sizeof oldest, "%s", (const char *)sqlite3_column_text(st, 0));
        done(s, st);
        if (rc == SQLITE_DONE)
            return 0; /* only the new one is left: it stays, whatever it takes */
        if (rc != SQLITE_ROW)
            return failed(s, rc, what);
        const char *const old[] = {tenant, oldest};
        rc = write_texts(s, "DELETE FROM profile WHERE tenant = ?1 AND key = ?2", old, 2, what);
        if (rc == 0)
            rc = write_texts(s, "DELETE FROM profile_run WHERE tenant = ?1 AND key = ?2", old, 2,
                             what);
        if (rc != 0)
            return rc;
        log_info("store: profile %s/%s dropped: the tenant's profiles were over "
                 "profile-max-keys %u or profile-max-bytes %llu (%u, %llu bytes)", tenant, oldest,
                 max_keys, (unsigned long long)max_bytes, n, (unsigned long long)bytes);
        (*evicted)++;
    }
}

int store_profile_add(struct store *s, const struct profile_run *r, unsigned max_keys,
                      uint64_t max_bytes, unsigned *evicted)
{
    settle_owed(s);
    *evicted = 0;
    const char *what = "cannot record a profile run";
    const char *const tk[] = {r->tenant, r->key};
    sqlite3_stmt *st = NULL;
    int rc = exec(s, "BEGIN IMMEDIATE");
    if (rc == 0) {
        int prc = sqlite3_prepare_v2(s->db,
                                     "INSERT INTO profile_run (tenant, key, peak, duration_ns,"
                                     " util_permille, ended_unix) VALUES (?1,?2,?3,?4,?5,?6)",
                                     -1, &st, NULL);
        if (prc != SQLITE_OK) {
            rc = failed(s, prc, what);
        } else {
            bool ok = bind_texts(st, tk, 2) &&
                      sqlite3_bind_int64(st, 3, (sqlite3_int64)r->peak) == SQLITE_OK &&
                      sqlite3_bind_int64(st, 4, (sqlite3_int64)r->duration_ns) == SQLITE_OK &&
                      (r->util_known ? sqlite3_bind_int(st, 5, (int)r->util_permille)
                                     : sqlite3_bind_null(st, 5)) == SQLITE_OK &&
                      sqlite3_bind_int64(st, 6, r->ended_unix) == SQLITE_OK;
            rc = run_bound(s, st, ok, what);
        }
    }
    if (rc == 0) {
        char sql[256];
        snprintf(sql, sizeof sql, "INSERT INTO profile (tenant, key, runs, last_unix)"
                                  " VALUES (?1, ?2, 1, %lld) ON CONFLICT(tenant, key) DO UPDATE"
                                  " SET runs=runs+1, last_unix=excluded.last_unix",
                 (long long)r->ended_unix);
        rc = write_texts(s, sql, tk, 2, what);
    }
    if (rc == 0) {
        char sql[256];
        snprintf(sql, sizeof sql, "DELETE FROM profile_run WHERE tenant=?1 AND key=?2 AND seq NOT"
                                  " IN (SELECT seq FROM profile_run WHERE tenant=?1 AND key=?2"
                                  " ORDER BY seq DESC LIMIT %d)", PROFILE_WINDOW);
        rc = write_texts(s, sql, tk, 2, what);
    }
    if (rc == 0)
        rc = profile_bound(s, r->tenant, r->key, max_keys, max_bytes, evicted);
    if (rc == 0)
        rc = exec(s, "COMMIT");
    if (rc != 0) {
        rollback(s);
        *evicted = 0;
    }
    return rc;
}

/* The aggregate of each profile, filtered by tenant and key when they are not NULL. */
static const char *profile_query =
    "SELECT p.tenant, p.key, p.runs, p.last_unix, MAX(r.peak), AVG(r.duration_ns),"
    " AVG(r.util_permille), COUNT(r.seq) FROM profile p JOIN profile_run r"
    " ON r.tenant = p.tenant AND r.key = p.key"
    " WHERE (?1 IS NULL OR p.tenant = ?1) AND (?2 IS NULL OR p.key = ?2)"
    " GROUP BY p.tenant, p.key ORDER BY p.tenant, p.key";

static void profile_from_row(sqlite3_stmt *st, struct profile *p)
{
    memset(p, 0, sizeof *p);
    const unsigned char *t = sqlite3_column_text(st, 0), *k = sqlite3_column_text(st, 1);
    snprintf(p->tenant, sizeof p->tenant, "%s", t ? (const char *)t : "");
    snprintf(p->key, sizeof p->key, "%s", k ? (const char *)k : "");
    sqlite3_int64 runs = sqlite3_column_int64(st, 2), peak = sqlite3_column_int64(st, 4);
    p->runs = runs > 0 ? (uint64_t)runs : 0;
    p->last_unix = sqlite3_column_int64(st, 3);
    p->peak = peak > 0 ? (uint64_t)peak : 0;
    double dur = sqlite3_column_double(st, 5);
    p->duration_s = dur > 0 ? dur / 1e9 : 0;
    p->utilization_known = sqlite3_column_type(st, 6) != SQLITE_NULL;
    double util = sqlite3_column_double(st, 6) / 1000.0;
    p->utilization = p->utilization_known ? (util < 0 ? 0 : util > 1 ? 1 : util) : 0;
    p->window = (unsigned)sqlite3_column_int(st, 7);
}

static int each_profile(struct store *s, const char *tenant, const char *key,
                        int (*fn)(void *ctx, const struct profile *p), void *ctx)
{
    sqlite3_stmt *st;
    if (prepare_kept(s, profile_query, &st) != SQLITE_OK)
        return -1;
    const char *const v[] = {tenant, key};
    if (!bind_texts(st, v, 2)) {
        done(s, st);
        return -1;
    }
    int rc, result = 0;
    while (result == 0 && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        struct profile p;
        profile_from_row(st, &p);
        result = fn(ctx, &p);
    }
    done(s, st);
    return result != 0 ? result : rc == SQLITE_DONE || rc == SQLITE_ROW ? 0 : -1;
}

static int copy_profile(void *ctx, const struct profile *p)
{
    *(struct profile *)ctx = *p;
    return 1; /* the first is the only one: stop */
}

int store_profile_get(struct store *s, const char *tenant, const char *key, struct profile *out)
{
    if (!tenant || !key)
        return 1;
    out->window = 0;
    int rc = each_profile(s, tenant, key, copy_profile, out);
    if (rc < 0)
        return -1;
    return rc == 1 && out->window > 0 ? 0 : 1;
}

int store_profile_each(struct store *s, const char *tenant,
                       int (*fn)(void *ctx, const struct profile *p), void *ctx)
{
    return each_profile(s, tenant, NULL, fn, ctx);
}

int store_profile_delete(struct store *s, const char *tenant, const char *key, unsigned *deleted)
{
    settle_owed(s);
    *deleted = 0;
    const char *const v[] = {key, tenant};
    const char *what = "cannot delete a profile";
    int rc = exec(s, "BEGIN IMMEDIATE");
    if (rc == 0)
        rc = write_texts(s, "DELETE FROM profile WHERE key=?1 AND (?2 IS NULL OR tenant=?2)", v, 2,
                         what);
    if (rc == 0)
        *deleted = (unsigned)sqlite3_changes(s->db);
    if (rc == 0)
        rc = write_texts(s, "DELETE FROM profile_run WHERE key=?1 AND (?2 IS NULL OR tenant=?2)",
                         v, 2, what);
    if (rc == 0)
        rc = exec(s, "COMMIT");
    if (rc != 0) {
        rollback(s);
        *deleted = 0;
    }
    return rc;
}

/* ---- interference (api_interference.h) ---------------------------------------------------- */

int store_interference_put(struct store *s, const char *tenant,
                           const struct interference_row *rows, size_t n, unsigned max_rows,
                           bool *over)
{
    settle_owed(s);
    *over = false;
    const char *what = "cannot store the interference rows";
    int rc = exec(s, "BEGIN IMMEDIATE");
    for (size_t i = 0; rc == 0 && i < n; i++) {
        sqlite3_stmt *st;
        int prc = sqlite3_prepare_v2(s->db,
                                     "INSERT INTO interference (tenant, foreground, background,"
                                     " slowdown, runs, measured_unix) VALUES (?1,?2,?3,?4,?5,?6)"
                                     " ON CONFLICT(tenant, foreground, background) DO UPDATE SET"
                                     " slowdown=excluded.slowdown, runs=excluded.runs,"
                                     " measured_unix=excluded.measured_unix",
                                     -1, &st, NULL);
        if (prc != SQLITE_OK) {
            rc = failed(s, prc, what);
            break;
        }
        const char *const v[] = {tenant, rows[i].foreground, rows[i].background};
        bool ok = bind_texts(st, v, 3) &&
                  sqlite3_bind_double(st, 4, rows[i].slowdown) == SQLITE_OK &&
                  sqlite3_bind_int64(st, 5, (sqlite3_int64)rows[i].runs) == SQLITE_OK &&
                  sqlite3_bind_int64(st, 6, rows[i].measured_unix) == SQLITE_OK;
        rc = run_bound(s, st, ok, what);
    }
    if (rc == 0) {
        /* A tenant's rows are bounded: every request is, but new keys could grow it forever. */
        sqlite3_stmt *st;
        int prc = sqlite3_prepare_v2(s->db, "SELECT COUNT(*) FROM interference WHERE tenant=?1",
                                     -1, &st, NULL);
        if (prc != SQLITE_OK) {
            rc = failed(s, prc, what);
        } else {
            const char *const v[] = {tenant};
            int src = bind_texts(st, v, 1) ? sqlite3_step(st) : SQLITE_ERROR;
            if (src != SQLITE_ROW)
                rc = failed(s, src, what);
            else if (sqlite3_column_int64(st, 0) > (sqlite3_int64)max_rows)
                *over = true;
            done(s, st);
        }
    }
    if (rc == 0 && !*over)
        rc = exec(s, "COMMIT");
    if (rc != 0 || *over)
        rollback(s);
    return rc;
}

int store_interference_each(struct store *s, const char *tenant,
                            int (*fn)(void *ctx, const char *tenant,
                                      const struct interference_row *row),
                            void *ctx)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(s->db, "SELECT tenant, foreground, background, slowdown, runs,"
                                  " measured_unix FROM interference WHERE (?1 IS NULL OR"
                                  " tenant=?1) ORDER BY tenant, foreground, background",
                           -1, &st, NULL) != SQLITE_OK)
        return -1;
    const char *const v[] = {tenant};
    if (!bind_texts(st, v, 1)) {
        done(s, st);
        return -1;
    }
    int rc, result = 0;
    while (result == 0 && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        struct interference_row row = {0};
        const unsigned char *t = sqlite3_column_text(st, 0), *f = sqlite3_column_text(st, 1),
                            *b = sqlite3_column_text(st, 2);
        snprintf(row.foreground, sizeof row.foreground, "%s", f ? (const char *)f : "");
        snprintf(row.background, sizeof row.background, "%s", b ? (const char *)b : "");
        row.slowdown = sqlite3_column_double(st, 3);
        sqlite3_int64 runs = sqlite3_column_int64(st, 4);
        row.runs = runs > 0 ? (unsigned)runs : 0;
        row.measured_unix = sqlite3_column_int64(st, 5);
        result = fn(ctx, t ? (const char *)t : "", &row);
    }
    done(s, st);
    return result != 0 ? result : rc == SQLITE_DONE ? 0 : -1;
}

int store_interference_delete(struct store *s, const char *tenant, unsigned *deleted)
{
    settle_owed(s);
    *deleted = 0;
    const char *const v[] = {tenant};
    int rc = write_texts(s, "DELETE FROM interference WHERE (?1 IS NULL OR tenant=?1)", v, 1,
                         "cannot delete the interference rows");
    if (rc == 0)
        *deleted = (unsigned)sqlite3_changes(s->db);
    return rc;
}

/* ---- allocations (api_alloc.h) ---------------------------------------------------------------- */

int store_alloc_add(struct store *s, const struct stored_allocation *a, unsigned max_rows,
                    int64_t expire_before, bool *full)
{
    settle_owed(s);
    *full = false;
    const char *what = "cannot store the allocation";
    char devs[CG_MAX_DEVICES * 5 + 1] = "";
    for (unsigned i = 0, at = 0; i < a->ndevices && i < CG_MAX_DEVICES; i++)
        at += (unsigned)snprintf(devs + at, sizeof devs - at, "%s%u", i ? "," : "", a->devices[i]);
    int rc = exec(s, "BEGIN IMMEDIATE");
    sqlite3_stmt *st = NULL;
    if (rc == 0) { /* unclaimed ones past their time go first: they count against the bound */
        int prc = sqlite3_prepare_v2(s->db, "DELETE FROM allocations WHERE claimed_by='' AND "
                                            "created_unix<?1", -1, &st, NULL);
        rc = prc != SQLITE_OK ? failed(s, prc, what)
                              : run_bound(s, st, sqlite3_bind_int64(st, 1, expire_before) ==
                                                     SQLITE_OK, what);
    }
    if (rc == 0) {
        int prc = sqlite3_prepare_v2(s->db, "SELECT COUNT(*) FROM allocations", -1, &st, NULL);
        if (prc != SQLITE_OK) {
            rc = failed(s, prc, what);
        } else {
            *full = sqlite3_step(st) == SQLITE_ROW &&
                    sqlite3_column_int64(st, 0) >= (sqlite3_int64)max_rows;
            sqlite3_finalize(st);
        }
    }
    if (rc == 0 && !*full) {
        int prc = sqlite3_prepare_v2(s->db, "INSERT INTO allocations (token, kind, bytes, device,"
                                            " compute, devices, created_unix, priority, no_swap,"
                                            " exclusive) VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9,?10)",
                                     -1, &st, NULL);
        if (prc != SQLITE_OK) {
            rc = failed(s, prc, what);
        } else {
            int b = sqlite3_bind_text(st, 1, a->token, -1, SQLITE_STATIC);
            b |= sqlite3_bind_int(st, 2, a->kind);
            b |= sqlite3_bind_int64(st, 3, (sqlite3_int64)a->bytes);
            b |= sqlite3_bind_int(st, 4, a->device);
            b |= sqlite3_bind_int(st, 5, (int)a->compute);
            b |= sqlite3_bind_text(st, 6, devs, -1, SQLITE_STATIC);
            b |= sqlite3_bind_int64(st, 7, a->created_unix);
            b |= sqlite3_bind_int(st, 8, a->priority);
            b |= sqlite3_bind_int(st, 9, a->no_swap);
            b |= sqlite3_bind_int(st, 10, a->exclusive);
            rc = run_bound(s, st, b == SQLITE_OK, what);
        }
    }
    if (rc == 0)
        rc = exec(s, "COMMIT");
    if (rc != 0)
        rollback(s);
    return rc;
}

int store_alloc_get(struct store *s, const char *token, struct stored_allocation *out)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(s->db, "SELECT kind, bytes, device, compute, devices, created_unix,"
                                  " claimed_by, pod, priority, no_swap, exclusive"
                                  " FROM allocations WHERE token=?1",
                           -1, &st, NULL) != SQLITE_OK ||
        sqlite3_bind_text(st, 1, token, -1, SQLITE_STATIC) != SQLITE_OK)
        return -1;
    int rc = sqlite3_step(st);
    if (rc != SQLITE_ROW) {
        sqlite3_finalize(st);
        return rc == SQLITE_DONE ? 1 : -1;
    }
    /* Our own rows, still read as input: what does not parse is no allocation. */
    memset(out, 0, sizeof *out);
    snprintf(out->token, sizeof out->token, "%s", token);
    out->kind = sqlite3_column_int(st, 0);
    sqlite3_int64 bytes = sqlite3_column_int64(st, 1);
    out->bytes = bytes > 0 ? (uint64_t)bytes : 0;
    out->device = sqlite3_column_int(st, 2);
    int compute = sqlite3_column_int(st, 3);
    out->compute = compute > 0 ? (unsigned)compute : 0;
    const unsigned char *devs = sqlite3_column_text(st, 4);
    for (const char *p = devs ? (const char *)devs : ""; *p && out->ndevices < CG_MAX_DEVICES;) {
        char *end;
        unsigned long v = strtoul(p, &end, 10);
        if (end == p || v >= CG_MAX_DEVICES || (*end && *end != ','))
            break;
        out->devices[out->ndevices++] = (unsigned)v;
        p = *end ? end + 1 : end;
    }
    out->created_unix = sqlite3_column_int64(st, 5);
    const unsigned char *by = sqlite3_column_text(st, 6), *pod = sqlite3_column_text(st, 7);
    snprintf(out->claimed_by, sizeof out->claimed_by, "%s", by ? (const char *)by : "");
    snprintf(out->pod, sizeof out->pod, "%s", pod ? (const char *)pod : "");
    int prio = sqlite3_column_int(st, 8);
    out->priority = prio >= 0 && prio <= (int)CG_PRIORITY_MAX ? prio : -1;
    out->no_swap = sqlite3_column_int(st, 9) != 0;
    out->exclusive = sqlite3_column_int(st, 10) != 0;
    sqlite3_finalize(st);
    return 0;
}

int store_alloc_claim(struct store *s, const char *token, const char *claimed_by,
                      const char *pod)
{
    settle_owed(s);
    const char *const v[] = {token, claimed_by, pod};
    return write_texts(s, "UPDATE allocations SET claimed_by=?2, pod=?3 WHERE token=?1", v, 3,
                       "cannot record the allocation's claim");
}
