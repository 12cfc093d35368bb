/* store.c — SQLite persistence of containers and settings (see store.h). Every write is one
 * statement in autocommit mode: with WAL and synchronous=FULL a row is either durable or absent
 * after a crash, never half-written. */
#include "store.h"

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

struct store {
    sqlite3 *db;
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
    "  owner_start INTEGER NOT NULL DEFAULT 0, init_pid INTEGER NOT NULL DEFAULT 0);"
    "CREATE TABLE IF NOT EXISTS settings (key TEXT PRIMARY KEY, value TEXT NOT NULL);";

/* Columns added after the first release: a state.db written by an older daemon gets them with
 * their defaults, so an upgrade keeps every container. */
static int add_missing_columns(struct store *s, char *err, size_t errlen)
{
    static const char *const added[][2] = {
        {"created_mono", "INTEGER NOT NULL DEFAULT 0"},
        {"owner_start", "INTEGER NOT NULL DEFAULT 0"},
        {"init_pid", "INTEGER NOT NULL DEFAULT 0"},
    };
    for (size_t i = 0; i < sizeof added / sizeof added[0]; i++) {
        sqlite3_stmt *st;
        char sql[160];
        snprintf(sql, sizeof sql, "SELECT 1 FROM pragma_table_info('containers') WHERE name='%s'",
                 added[i][0]);
        if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) != SQLITE_OK) {
            snprintf(err, errlen, "cannot read the schema: %s", sqlite3_errmsg(s->db));
            return -1;
        }
        bool present = sqlite3_step(st) == SQLITE_ROW;
        sqlite3_finalize(st);
        if (present)
            continue;
        snprintf(sql, sizeof sql, "ALTER TABLE containers ADD COLUMN %s %s", added[i][0],
                 added[i][1]);
        char *msg = NULL;
        if (sqlite3_exec(s->db, sql, NULL, NULL, &msg) != SQLITE_OK) {
            snprintf(err, errlen, "cannot upgrade the schema (%s): %s", added[i][0], msg ? msg : "?");
            sqlite3_free(msg);
            return -1;
        }
        log_info("store: upgraded: column %s added", added[i][0]);
    }
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
    char *msg = NULL;
    if (sqlite3_exec(s->db, schema, NULL, NULL, &msg) != SQLITE_OK) {
        snprintf(err, errlen, "cannot initialise %s: %s", path, msg ? msg : "?");
        sqlite3_free(msg);
        store_close(s);
        return NULL;
    }
    if (add_missing_columns(s, err, errlen) != 0) {
        store_close(s);
        return NULL;
    }
    return s;
}

void store_close(struct store *s)
{
    if (!s)
        return;
    sqlite3_close(s->db);
    free(s);
}

int store_put_container(struct store *s, const struct container *c)
{
    /* Upsert keeps the original seq, so creation order survives limit changes. */
    static const char *sql =
        "INSERT INTO containers (id, name, device, limit_bytes, assigned, uid, gid, owner_pid,"
        " auto_remove, created_unix, created_mono, owner_start, init_pid)"
        " VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13)"
        " ON CONFLICT(id) DO UPDATE SET limit_bytes=excluded.limit_bytes,"
        " assigned=excluded.assigned, owner_pid=excluded.owner_pid,"
        " auto_remove=excluded.auto_remove, owner_start=excluded.owner_start,"
        " init_pid=excluded.init_pid";
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) != SQLITE_OK)
        return -1;
    cg_container_info ci = {0};
    cg_container_get(c->d->core, c->cid, loop_now_ns(), &ci);
    sqlite3_bind_text(st, 1, c->id, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, c->name, -1, SQLITE_STATIC);
    sqlite3_bind_int(st, 3, (int)c->device);
    sqlite3_bind_int64(st, 4, (sqlite3_int64)c->limit);
    sqlite3_bind_int64(st, 5, (sqlite3_int64)ci.assigned);
    sqlite3_bind_int64(st, 6, (sqlite3_int64)c->owner_uid);
    sqlite3_bind_int64(st, 7, (sqlite3_int64)c->owner_gid);
    sqlite3_bind_int64(st, 8, (sqlite3_int64)c->owner_pid);
    sqlite3_bind_int(st, 9, c->auto_remove);
    sqlite3_bind_int64(st, 10, c->created_unix);
    sqlite3_bind_int64(st, 11, (sqlite3_int64)c->created_mono);
    sqlite3_bind_int64(st, 12, (sqlite3_int64)c->owner_start);
    sqlite3_bind_int64(st, 13, (sqlite3_int64)c->init_pid);
    int rc = sqlite3_step(st);
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) {
        log_error("store: cannot save container %s: %s", c->id, sqlite3_errmsg(s->db));
        return -1;
    }
    return 0;
}

int store_delete_container(struct store *s, const char *id)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(s->db, "DELETE FROM containers WHERE id=?1", -1, &st, NULL) != SQLITE_OK)
        return -1;
    sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
    int rc = sqlite3_step(st);
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? 0 : -1;
}

int store_each_container(struct store *s, int (*fn)(void *ctx, const struct stored_container *sc),
                         void *ctx)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(s->db,
                           "SELECT id, name, device, limit_bytes, assigned, uid, gid, owner_pid,"
                           " auto_remove, created_unix, created_mono, owner_start, init_pid"
                           " FROM containers ORDER BY seq",
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
        if (fn(ctx, &sc) != 0)
            result = -1;
    }
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? result : -1;
}

int store_set(struct store *s, const char *key, const char *value)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(s->db, "INSERT OR REPLACE INTO settings (key, value) VALUES (?1, ?2)",
                           -1, &st, NULL) != SQLITE_OK)
        return -1;
    sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, value, -1, SQLITE_STATIC);
    int rc = sqlite3_step(st);
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? 0 : -1;
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
    sqlite3_finalize(st);
    return result;
}
