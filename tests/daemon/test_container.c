/* test_container.c — container.c without the API: creation, its refusals, changes and removal.
 *
 * Invariants checked:
 *   - a refused creation changes nothing: no container, no directory, no record, and the core
 *     holds what it held (same containers on the device, same free memory);
 *   - a created container is found by id and name, has its socket, record and sealed ledger
 *     (the ledger says its limit and device), and the core has it with that limit;
 *   - a refused change changes nothing; an accepted one is in the core, the ledger and the
 *     container;
 *   - a removed container leaves nothing: not found, no directory, no record, not in the core.
 * Two devices of 1 GiB; each table row is one request and the code it must get. */
#include <errno.h>
#include <sys/stat.h>

#include "daemon_test.h"

static bool exists_at(int dirfd, const char *name)
{
    struct stat st;
    return fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0;
}

struct snapshot {
    unsigned ncontainers, on_device[2];
    uint64_t free[2];
};

static struct snapshot snap(struct daemon *d)
{
    struct snapshot s = {0};
    for (struct container *c = d->containers; c; c = c->next)
        s.ncontainers++;
    for (unsigned i = 0; i < 2; i++) {
        cg_device_info di = {0};
        cg_device_get(d->core, i, &di);
        s.on_device[i] = di.ncontainers;
        s.free[i] = di.free;
    }
    return s;
}

static const struct {
    const char *what;
    const char *id, *name;
    cg_container_spec spec;
    int rc;
} creations[] = {
    {"a container on device 0", "a", "alpha", {.device = 0, .limit = 256 * MiB}, 0},
    {"placed by the core", "b", "", {.device = -1, .limit = 128 * MiB}, 0},
    {"with a hard compute share", "h", "", {.device = 1, .limit = 64 * MiB, .compute_pct = 60,
                                            .compute_mode = CG_COMPUTE_HARD}, 0},
    {"a limit of zero", "z", "", {.device = 0, .limit = 0}, -EINVAL},
    {"no such device", "n", "", {.device = 7, .limit = MiB}, -ENODEV},
    {"a compute share over 100%", "p", "", {.device = 0, .limit = MiB, .compute_pct = 150},
     -EINVAL},
    {"a priority over 9", "q", "", {.device = 0, .limit = MiB, .priority = 10}, -EINVAL},
    {"an id that is not a name", "../x", "", {.device = 0, .limit = MiB}, -EINVAL},
    {"a name that is not a name", "ok", "a b", {.device = 0, .limit = MiB}, -EINVAL},
    {"an id taken", "a", "", {.device = 0, .limit = MiB}, -EEXIST},
    {"a name taken", "c", "alpha", {.device = 0, .limit = MiB}, -EEXIST},
    {"a name that is another's id", "c", "b", {.device = 0, .limit = MiB}, -EEXIST},
    {"more than the device", "big", "", {.device = 0, .limit = 2048 * MiB}, -EINVAL},
    {"a hard share that does not fit beside 60%", "h2", "",
     {.device = 1, .limit = MiB, .compute_pct = 50, .compute_mode = CG_COMPUTE_HARD}, -EBUSY},
    {"exclusive on a device with containers", "x", "", {.device = 0, .limit = MiB,
                                                          .exclusive = true}, -EBUSY},
};

static void creation_table(struct daemon *d)
{
    for (size_t k = 0; k < sizeof creations / sizeof creations[0]; k++) {
        struct snapshot before = snap(d);
        struct container *c = NULL;
        char err[512] = "";
        int rc = container_create(d, creations[k].id, creations[k].name, NULL, &creations[k].spec,
                                  getuid(), getgid(), 0, false, NULL, NULL, &c, err, sizeof err);
        CHECK(rc == creations[k].rc, "%s: %d (%s), expected %d", creations[k].what, rc, err,
              creations[k].rc);
        if (rc != 0) {
            struct snapshot after = snap(d);
            CHECK(err[0] != '\0', "%s: refused without a word", creations[k].what);
            CHECK(memcmp(&before, &after, sizeof before) == 0, "%s: the refusal changed things",
                  creations[k].what);
            if (creations[k].rc != -EEXIST && strchr(creations[k].id, '/') == NULL)
                CHECK(!exists_at(d->rd.containers_fd, creations[k].id) &&
                          !exists_at(d->rd.records_fd, creations[k].id),
                      "%s: files left behind", creations[k].what);
            continue;
        }
        cg_container_info ci;
        CHECK(cg_container_get(d->core, c->cid, 0, &ci) == CG_OK && ci.limit == c->limit &&
                  c->limit == creations[k].spec.limit && ci.device == c->device,
              "%s: the core has it with its limit", creations[k].what);
        CHECK(container_find(d, creations[k].id) == c &&
                  (!creations[k].name[0] || container_find(d, creations[k].name) == c) &&
                  container_by_cid(d, c->cid) == c,
              "%s: found by id, name and cid", creations[k].what);
        CHECK(exists_at(c->endpoint.dir_fd, "container.sock") &&
                  exists_at(d->rd.records_fd, c->ident.id),
              "%s: its socket and record", creations[k].what);
        CHECK(c->ledger && c->ledger->magic == CG_LEDGER_MAGIC &&
                  atomic_load(&c->ledger->limit) == c->limit && c->ledger->device == c->device &&
                  fcntl(c->ledger_fd, F_GET_SEALS) & F_SEAL_GROW,
              "%s: its sealed ledger", creations[k].what);
        if (creations[k].spec.compute_pct)
            CHECK(ci.compute_pct == creations[k].spec.compute_pct, "%s: share %u",
                  creations[k].what, ci.compute_pct);
        check_invariants(d, creations[k].what);
    }
}

static const struct {
    const char *what;
    const char *id;
    struct container_change ch;
    int rc;
    uint64_t limit_after;
} changes[] = {
    {"a lower limit", "a", {.has_limit = true, .limit = 200 * MiB}, 0, 200 * MiB},
    {"a limit above the device", "a", {.has_limit = true, .limit = 4096 * MiB}, -EINVAL,
     200 * MiB},
    {"a limit below the container's use", "a", {.has_limit = true, .limit = 4 * MiB}, -EINVAL,
     200 * MiB},
    {"a raise", "a", {.has_limit = true, .limit = 300 * MiB}, 0, 300 * MiB},
    {"a hard share that does not fit", "b", {.has_compute = true, .compute_pct = 50,
                                             .compute_mode = CG_COMPUTE_HARD}, -EBUSY, 128 * MiB},
    {"an elastic share", "b", {.has_compute = true, .compute_pct = 30,
                               .compute_mode = CG_COMPUTE_ELASTIC}, 0, 128 * MiB},
    {"a priority", "b", {.has_priority = true, .priority = 7}, 0, 128 * MiB},
};

static void change_table(struct daemon *d)
{
    /* Container a uses 10 MiB, so a limit below that is refused. */
    int peer;
    struct proc *p = test_proc(d, container_find(d, "a"), &peer);
    decide_alloc(d, p, 1, 10 * MiB);
    CHECK(test_reply(peer, NULL) == CG_ALLOC_GRANTED, "a uses 10 MiB");
    /* b is placed by the core: the hard share must not fit wherever it went. */
    struct container *b = container_find(d, "b");
    if (b->device == 0) {
        cg_container_spec spec = {.device = 0, .limit = MiB, .compute_pct = 60,
                                  .compute_mode = CG_COMPUTE_HARD};
        struct container *h0;
        char err[256];
        CHECK(container_create(d, "h0", "", NULL, &spec, getuid(), getgid(), 0, false, NULL,
                               NULL, &h0, err, sizeof err) == 0, "a hard share on 0: %s", err);
    }
    for (size_t k = 0; k < sizeof changes / sizeof changes[0]; k++) {
        struct container *c = container_find(d, changes[k].id);
        cg_container_info before, after;
        cg_container_get(d->core, c->cid, 0, &before);
        char err[512] = "";
        bool waits = false;
        int rc = container_update(d, c, &changes[k].ch, &waits, err, sizeof err);
        cg_container_get(d->core, c->cid, 0, &after);
        CHECK(rc == changes[k].rc, "%s: %d (%s), expected %d", changes[k].what, rc, err,
              changes[k].rc);
        CHECK(c->limit == changes[k].limit_after && after.limit == c->limit &&
                  atomic_load(&c->ledger->limit) == c->limit,
              "%s: limit %llu (core %llu), expected %llu", changes[k].what,
              (unsigned long long)c->limit, (unsigned long long)after.limit,
              (unsigned long long)changes[k].limit_after);
        if (rc != 0)
            CHECK(after.compute_pct == before.compute_pct && after.priority == before.priority &&
                      err[0],
                  "%s: refused, and nothing else changed", changes[k].what);
        else if (changes[k].ch.has_compute)
            CHECK(after.compute_pct == changes[k].ch.compute_pct, "%s: share %u",
                  changes[k].what, after.compute_pct);
        else if (changes[k].ch.has_priority)
            CHECK(after.priority == changes[k].ch.priority, "%s: priority %u",
                  changes[k].what, after.priority);
        check_invariants(d, changes[k].what);
    }
    close(peer);
}

static void removal(struct daemon *d)
{
    while (d->containers) {
        struct container *c = d->containers;
        char id[CONTAINER_ID_MAX + 1];
        snprintf(id, sizeof id, "%s", c->ident.id);
        cg_cid cid = c->cid;
        CHECK(container_remove(d, c, "test") == 0, "remove %s", id);
        cg_container_info ci;
        CHECK(!container_find(d, id) && !container_by_cid(d, cid) &&
                  cg_container_get(d->core, cid, 0, &ci) != CG_OK,
              "%s is gone from the daemon and the core", id);
        CHECK(!exists_at(d->rd.containers_fd, id) && !exists_at(d->rd.records_fd, id),
              "%s leaves no directory or record", id);
        check_invariants(d, "removal");
    }
    struct snapshot s = snap(d);
    CHECK(s.on_device[0] == 0 && s.on_device[1] == 0 && s.free[0] == 1024 * MiB &&
              s.free[1] == 1024 * MiB,
          "every device is free again");
}

int main(void)
{
    uint64_t devices[2] = {1024 * MiB, 1024 * MiB};
    struct daemon *d = test_daemon_new(devices, 2);
    creation_table(d);
    change_table(d);
    removal(d);
    test_daemon_free(d);
    if (!failures)
        printf("container: %zu creations, %zu changes and the removals as container.c says\n",
               sizeof creations / sizeof creations[0], sizeof changes / sizeof changes[0]);
    return failures != 0;
}
