/* store.h — what must survive a daemon restart, kept in SQLite (WAL, synchronous=FULL):
 * containers (id, name, device, limit, owner, creation order) and settings (policies).
 * Per-process use survives in the ledger files themselves (see ledger.h). */
#ifndef CONVGPUD_STORE_H
#define CONVGPUD_STORE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

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
};

struct store *store_open(const char *path, char *err, size_t errlen);
void store_close(struct store *s);
int store_put_container(struct store *s, const struct container *c);
int store_delete_container(struct store *s, const char *id);
/* Calls fn for each stored container in creation order. */
int store_each_container(struct store *s, int (*fn)(void *ctx, const struct stored_container *sc),
                         void *ctx);
int store_set(struct store *s, const char *key, const char *value);
/* Copies the value into buf; returns 0 when found, 1 when absent, -1 on error. */
int store_get(struct store *s, const char *key, char *buf, size_t len);

#endif
