/* main.c — convgpud: options, runtime directory, restore after a restart, and the event loop. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <grp.h>
#include <libgen.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "api.h"
#include "api_route.h"
#include "config.h"
#include "metrics.h"
#include "watchdog.h"
#include "gates.h"
#include "daemon.h"
#include "fdbudget.h"
#include "fdspare.h"
#include <sys/resource.h>
#include "gang.h"
#include "swap.h"
#include "adaptive.h"
#include "oversub.h"
#include "log.h"
#include "size.h"
#include "store.h"
#include "topology.h"
#include "topology_file.h"

static void usage(FILE *f)
{
    fprintf(f,
            "Usage: convgpud [OPTIONS]\n"
            "\n"
            "The convgpu node daemon: the authority on every byte of GPU memory on this node.\n"
            "Containers get a GPU-memory limit; a container that asks for more than is free\n"
            "right now is suspended and resumed by the scheduling policy when memory returns.\n"
            "\n"
            "Options (each may also be set as `name = value` in the configuration file):\n"
            "  --config FILE         configuration file (default " CONFIG_DEFAULT_PATH " if it\n"
            "                        exists); flags given here override it\n"
            "  --runtime-dir DIR     sockets, ledgers and state (default /run/convgpu,\n"
            "                        or $CONVGPU_RUNTIME_DIR)\n"
            "  --emulate SPEC        run on the emulated GPU: 5GiB, 4x8GiB, 8GiB,16GiB\n"
            "  --topology FILE       with --emulate: how the emulated GPUs are wired (NVLink,\n"
            "                        PCIe switches, sockets; docs/OPERATIONS.md); real GPUs'\n"
            "                        wiring is read from NVML\n"
            "  --policy NAME         resume policy: fifo (default), best-fit, recent, random,\n"
            "                        aging-fit\n"
            "  --placement NAME      device placement: first-fit (default), least-loaded, binpack,\n"
            "                        load-balance, standalone (by profiled utilisation/application)\n"
            "  --fair-share MODE     tenants' fair share of each device: none (default), static\n"
            "                        (capacity x weight / active weights), adaptive (seed 001's\n"
            "                        Eq. 1 over job counts and the running jobs' profiles)\n"
            "  --fair-interval SECONDS  adaptive: how often the profiles are re-read (default\n"
            "                        30; also at every container's start and end)\n"
            "  --oversubscribe F|LIST|adaptive  sharing factor: each GPU promises capacity x F\n"
            "                        to kubelet and Slurm, F from 1.0 (default: no more than it\n"
            "                        has) to 4.0; per GPU as 0=2,1=1.5; adaptive: 1.0-2.0 from\n"
            "                        profiled peaks and the swap budget. Admission is unchanged\n"
            "                        (docs/SCHEDULING.md, Sharing factor)\n"
            "  --reserve SIZE        memory kept back on every device (default 0)\n"
            "  --context-charge SIZE per-process context charge (default: measured per device)\n"
            "  --granularity SIZE    allocation rounding (default 2MiB)\n"
            "  --control-group NAME  members of this group may use the control socket (0660)\n"
            "  --operators-group NAME  members see and act on every container through the\n"
            "                        control socket (default: only root and the daemon's user);\n"
            "                        everyone else sees only its own containers\n"
            "  --user-memory-quota SIZE|N%%  the GPU-memory limits one user's containers may add\n"
            "                        up to, in bytes or percent of the node's capacity (default\n"
            "                        100%%); root, the daemon's user and operators are exempt\n"
            "  --user-max-containers N  containers one user may hold (default 64; 0 = no bound)\n"
            "  --default-gpu-compute PCT|none  compute share (whole percent of one GPU's time,\n"
            "                        1-100) of a container created without one (default none:\n"
            "                        no compute limit)\n"
            "  --default-compute-mode hard|elastic  mode of a share given without one (default\n"
            "                        elastic: may use time nobody else wants; hard: never more)\n"
            "  --metrics ADDR:PORT   also serve Prometheus metrics on TCP (default off; /metrics\n"
            "                        on the control socket is always there)\n"
            "  --api-max-connections N  control-socket connections in all (default 512; an\n"
            "                        eighth, at least 8, is kept for root and operators)\n"
            "  --api-user-connections N  control-socket connections one user who is not root or\n"
            "                        an operator may hold (default 32)\n"
            "  --api-user-followers N  event streams (GET /v1/events?follow=1) one such user may\n"
            "                        hold (default 4)\n"
            "  --api-request-timeout S  seconds a request may take to arrive, however slowly it\n"
            "                        trickles (default 10; 1-3600)\n"
            "  --max-client-connections N  container-socket connections in all (default: what\n"
            "                        the descriptor limit leaves; docs/SECURITY.md)\n"
            "  --user-max-connections N  container-socket connections one user's containers may\n"
            "                        hold together (default: a quarter of the total; root's\n"
            "                        containers are bounded by the total only)\n"
            "  --user-max-priority N  the highest priority (0-9) a user who is not root or an\n"
            "                        operator may give its containers (default 0); above it, and\n"
            "                        for exclusive GPUs, a tenant needs an allowance that root\n"
            "                        gives with convgpu tenant set (docs/SECURITY.md)\n"
            "  --api-idle-timeout S  seconds a control-socket connection may stay silent before\n"
            "                        it is closed (default 30; 1-3600; event followers\n"
            "                        waiting for events are exempt)\n"
            "  --watchdog-interval S seconds between NVML cross-checks of every process's GPU\n"
            "                        memory (default 5; 0 = off)\n"
            "  --watchdog-tolerance SIZE  how far a container may exceed its limit by NVML\n"
            "                        before it is flagged (default 64MiB)\n"
            "  --watchdog-kill yes|no  kill what the watchdog flags (default no: report only)\n"
            "  --swap yes|no         make containers' allocations swappable, and let the scheduler\n"
            "                        move waiting or lower-priority containers to host memory\n"
            "                        (default no; docs/SWAP.md)\n"
            "  --swap-limit SIZE     host memory swapped-out containers may hold together\n"
            "                        (default: half the host's memory when --swap yes)\n"
            "  --swap-hold-share N%%  the share of --swap-limit that users who are not operators\n"
            "                        may hold their own containers out with (convgpu swap), all\n"
            "                        together, each its tenant's weighted part (default 50%%;\n"
            "                        0 = only operators hold); the rest stays for preemption\n"
            "  --aging SECONDS       waiting this long lifts a container one priority class\n"
            "                        (default 60; docs/SCHEDULING.md, Priorities)\n"
            "  --profile-limits MARGIN|off  a container created without a GPU-memory limit gets\n"
            "                        its profile's peak (learnt from past runs of the same\n"
            "                        image or command by the same user) plus MARGIN, 1%%-100%%\n"
            "                        (default off: a limit is required; convgpu profile)\n"
            "  --profile-max-keys N  profiles (keys) one tenant keeps; the oldest goes first\n"
            "                        (default 256)\n"
            "  --profile-max-bytes SIZE  what one tenant's profiles may take in state.db, keys\n"
            "                        and runs (default 1MiB; at least 16KiB); the oldest first\n"
            "  --log-level LEVEL     error, warn, info (default), debug\n"
            "  --foreground          do not detach (use under systemd, docker, tests)\n"
            "  --version             print the version and exit\n"
            "  --routes              print the control API's routes and who may call each\n"
            "  -h, --help            this help\n"
            "\n"
            "Control API: curl --unix-socket DIR/control.sock http://convgpu/v1/containers\n");
}

/* Settings that are a whole number in a range: one row each, one parser for all. */
static const struct uint_setting {
    const char *key;
    size_t offset; /* of the unsigned in struct daemon_options */
    unsigned long min, max;
} uint_settings[] = {
    {"api-max-connections", offsetof(struct daemon_options, api_max_connections), 16, 65536},
    {"api-user-connections", offsetof(struct daemon_options, api_user_connections), 1, 65536},
    {"api-user-followers", offsetof(struct daemon_options, api_user_followers), 0, 64},
    {"api-request-timeout", offsetof(struct daemon_options, api_request_timeout), 1, 3600},
    {"max-client-connections", offsetof(struct daemon_options, max_client_connections), 64,
     1000000},
    {"user-max-connections", offsetof(struct daemon_options, user_max_connections), 1, 1000000},
    {"user-max-priority", offsetof(struct daemon_options, user_max_priority), 0, 9},
};

/* 1 when key is one of uint_settings (0 applied, or -1 with err), 0 when it is not. */
static int apply_uint_setting(struct daemon_options *o, const char *key, const char *value,
                              int *rc, char *err, size_t errlen)
{
    for (size_t i = 0; i < sizeof uint_settings / sizeof uint_settings[0]; i++) {
        const struct uint_setting *u = &uint_settings[i];
        if (strcmp(key, u->key) != 0)
            continue;
        char *end;
        errno = 0;
        unsigned long n = strtoul(value, &end, 10);
        if (errno || *end || end == value || value[0] < '0' || value[0] > '9' || n < u->min ||
            n > u->max) {
            snprintf(err, errlen, "%s takes a whole number from %lu to %lu, not '%s'", key,
                     u->min, u->max, value);
            *rc = -1;
        } else {
            *(unsigned *)((char *)o + u->offset) = (unsigned)n;
            *rc = 0;
        }
        return 1;
    }
    return 0;
}

/* Applies one setting (from the command line or the configuration file); 0 or -1 with err. */
static int apply_option(void *ctx, const char *key, const char *value, char *err, size_t errlen)
{
    struct daemon_options *o = ctx;
    const char *why;
    uint64_t v;
    int urc;
    if (apply_uint_setting(o, key, value, &urc, err, errlen))
        return urc;
    if (strcmp(key, "runtime-dir") == 0) {
        if (value[0] != '/' || strlen(value) >= sizeof o->runtime_dir - 80) {
            snprintf(err, errlen, "runtime-dir must be an absolute path of at most %zu characters",
                     sizeof o->runtime_dir - 80);
            return -1;
        }
        snprintf(o->runtime_dir, sizeof o->runtime_dir, "%s", value);
    } else if (strcmp(key, "emulate") == 0) {
        if (strlen(value) >= sizeof o->emulate) {
            snprintf(err, errlen, "emulate takes a device list such as 5GiB or 4x8GiB");
            return -1;
        }
        snprintf(o->emulate, sizeof o->emulate, "%s", value);
    } else if (strcmp(key, "topology") == 0) {
        /* Parsed here so that a bad file stops the daemon before anything starts; the emulated
         * NVML reads it again from the absolute path. */
        static cg_topo scratch;
        char reason[PATH_MAX + 256], full[PATH_MAX];
        if (cg_topo_load(value, &scratch, reason, sizeof reason) != 0) {
            snprintf(err, errlen, "topology: %s", reason);
            return -1;
        }
        if (!realpath(value, full) || strlen(full) >= sizeof o->topology) {
            snprintf(err, errlen, "topology: %s: cannot resolve the path", value);
            return -1;
        }
        snprintf(o->topology, sizeof o->topology, "%s", full);
    } else if (strcmp(key, "policy") == 0) {
        o->policy_explicit = true;
        if (!cg_resume_policy_parse(value, &o->policy)) {
            snprintf(err, errlen, "unknown policy '%s' (fifo, best-fit, recent, random, %s)", value,
                     cg_resume_policy_name(CG_RESUME_AGING_FIT));
            return -1;
        }
    } else if (strcmp(key, "fair-share") == 0) {
        if (!cg_fair_mode_parse(value, &o->fair_share)) {
            snprintf(err, errlen, "unknown fair-share mode '%s' (none, static, adaptive)", value);
            return -1;
        }
    } else if (strcmp(key, "oversubscribe") == 0) {
        if (oversub_parse(value, &o->oversub, err, errlen) != 0)
            return -1;
    } else if (strcmp(key, "placement") == 0) {
        o->policy_explicit = true;
        if (!cg_placement_policy_parse(value, &o->placement)) {
            snprintf(err, errlen, "unknown placement '%s' (first-fit, least-loaded, binpack, load-balance, "
                                  "standalone)", value);
            return -1;
        }
    } else if (strcmp(key, "reserve") == 0 || strcmp(key, "context-charge") == 0 ||
               strcmp(key, "granularity") == 0) {
        if (cg_parse_size(value, &v, &why) != 0) {
            snprintf(err, errlen, "%s: bad size '%s': %s", key, value, why);
            return -1;
        }
        if (key[0] == 'r') {
            o->reserve = v;
        } else if (key[0] == 'c') {
            o->context_charge = v;
        } else {
            if (v == 0 || v % CG_LEDGER_PAGE || (v & (v - 1))) {
                snprintf(err, errlen, "granularity must be a power of two multiple of 4KiB");
                return -1;
            }
            o->granularity = v;
        }
    } else if (strcmp(key, "metrics") == 0) {
        if (strlen(value) >= sizeof o->metrics_addr || !strchr(value, ':')) {
            snprintf(err, errlen, "metrics takes ADDR:PORT, e.g. 127.0.0.1:9400");
            return -1;
        }
        snprintf(o->metrics_addr, sizeof o->metrics_addr, "%s", value);
    } else if (strcmp(key, "control-group") == 0) {
        if (strlen(value) >= sizeof o->control_group || !getgrnam(value)) {
            snprintf(err, errlen, "control-group: no group named '%s'", value);
            return -1;
        }
        snprintf(o->control_group, sizeof o->control_group, "%s", value);
    } else if (strcmp(key, "operators-group") == 0) {
        struct group *g = strlen(value) < sizeof o->operators_group ? getgrnam(value) : NULL;
        if (!g) {
            snprintf(err, errlen, "operators-group: no group named '%s'", value);
            return -1;
        }
        snprintf(o->operators_group, sizeof o->operators_group, "%s", value);
        o->operators_gid = g->gr_gid;
    } else if (strcmp(key, "user-memory-quota") == 0) {
        size_t n = strlen(value);
        if (n > 1 && value[n - 1] == '%') {
            char *end;
            errno = 0;
            unsigned long pct = strtoul(value, &end, 10);
            if (errno || end != value + n - 1 || value[0] < '0' || value[0] > '9' || pct < 1 ||
                pct > 100) {
                snprintf(err, errlen, "user-memory-quota: a percentage is 1%% to 100%%, not '%s'",
                         value);
                return -1;
            }
            o->user_memory_quota = 0;
            o->user_memory_quota_pct = (unsigned)pct;
        } else if (cg_parse_size(value, &v, &why) != 0 || v == 0) {
            snprintf(err, errlen, "user-memory-quota takes a size (e.g. 8GiB) or a percentage of "
                                  "the node's capacity (e.g. 50%%), not '%s'", value);
            return -1;
        } else {
            o->user_memory_quota = v;
        }
    } else if (strcmp(key, "user-max-containers") == 0) {
        char *end;
        errno = 0;
        unsigned long n = strtoul(value, &end, 10);
        if (errno || *end || end == value || value[0] < '0' || value[0] > '9' || n > 100000) {
            snprintf(err, errlen, "user-max-containers takes a number from 0 (no bound) to 100000");
            return -1;
        }
        o->user_max_containers = (unsigned)n;
    } else if (strcmp(key, "default-gpu-compute") == 0) {
        unsigned pct = 0;
        if (strcmp(value, "none") != 0 && !cg_compute_pct_parse(value, &pct)) {
            snprintf(err, errlen, "default-gpu-compute takes a whole percentage from 1 to 100, "
                                  "or none, not '%s'", value);
            return -1;
        }
        o->default_compute_pct = pct;
    } else if (strcmp(key, "default-compute-mode") == 0) {
        if (!cg_compute_mode_parse(value, &o->default_compute_mode)) {
            snprintf(err, errlen, "default-compute-mode takes hard or elastic, not '%s'", value);
            return -1;
        }
    } else if (strcmp(key, "api-idle-timeout") == 0) {
        char *end;
        errno = 0;
        unsigned long secs = strtoul(value, &end, 10);
        if (errno || *end || end == value || value[0] == '-' || secs < 1 || secs > 3600) {
            snprintf(err, errlen, "api-idle-timeout takes whole seconds from 1 to 3600, not '%s'",
                     value);
            return -1;
        }
        o->api_idle_timeout = (unsigned)secs;
    } else if (strcmp(key, "watchdog-interval") == 0) {
        char *end;
        errno = 0;
        double v2 = strtod(value, &end);
        if (errno || *end || end == value || !(v2 == 0 || (v2 >= 0.1 && v2 <= 86400))) {
            snprintf(err, errlen, "watchdog-interval takes seconds: 0 (off) or 0.1 to 86400");
            return -1;
        }
        o->watchdog_interval = v2;
    } else if (strcmp(key, "watchdog-tolerance") == 0) {
        if (cg_parse_size(value, &v, &why) != 0) {
            snprintf(err, errlen, "watchdog-tolerance: bad size '%s': %s", value, why);
            return -1;
        }
        o->watchdog_tolerance = v;
    } else if (strcmp(key, "watchdog-kill") == 0) {
        if (strcmp(value, "yes") == 0 || strcmp(value, "true") == 0)
            o->watchdog_kill = true;
        else if (strcmp(value, "no") == 0 || strcmp(value, "false") == 0)
            o->watchdog_kill = false;
        else {
            snprintf(err, errlen, "watchdog-kill takes yes or no");
            return -1;
        }
    } else if (strcmp(key, "swap") == 0) {
        if (strcmp(value, "yes") == 0 || strcmp(value, "true") == 0)
            o->swap = true;
        else if (strcmp(value, "no") == 0 || strcmp(value, "false") == 0)
            o->swap = false;
        else {
            snprintf(err, errlen, "swap takes yes or no");
            return -1;
        }
    } else if (strcmp(key, "swap-limit") == 0) {
        if (cg_parse_size(value, &v, &why) != 0) {
            snprintf(err, errlen, "swap-limit: bad size '%s': %s", value, why);
            return -1;
        }
        o->swap_limit = v;
        o->swap_limit_set = true;
    } else if (strcmp(key, "swap-hold-share") == 0) {
        if (strcmp(value, "0") == 0 || strcmp(value, "0%") == 0)
            o->swap_hold_pct = 0;
        else if (!cg_pct_parse(value, 100, &o->swap_hold_pct)) {
            snprintf(err, errlen, "swap-hold-share takes a whole percentage from 0 to 100, not "
                                  "'%s'", value);
            return -1;
        }
    } else if (strcmp(key, "profile-max-keys") == 0) {
        char *end;
        errno = 0;
        unsigned long n = strtoul(value, &end, 10);
        if (errno || *end || end == value || value[0] < '0' || value[0] > '9' || n < 1 ||
            n > 100000) {
            snprintf(err, errlen, "profile-max-keys takes a number from 1 to 100000");
            return -1;
        }
        o->profile_max_keys = (unsigned)n;
    } else if (strcmp(key, "profile-max-bytes") == 0) {
        if (cg_parse_size(value, &v, &why) != 0 || v < PROFILE_MAX_BYTES_MIN) {
            snprintf(err, errlen, "profile-max-bytes takes a size of at least %uKiB, not '%s'",
                     PROFILE_MAX_BYTES_MIN >> 10, value);
            return -1;
        }
        o->profile_max_bytes = v;
    } else if (strcmp(key, "fair-interval") == 0) {
        char *end;
        errno = 0;
        double s1 = strtod(value, &end);
        if (errno || *end || end == value || !(s1 >= 1 && s1 <= ADAPTIVE_INTERVAL_MAX_S)) {
            snprintf(err, errlen, "fair-interval takes seconds from 1 to %d, not '%s'",
                     ADAPTIVE_INTERVAL_MAX_S, value);
            return -1;
        }
        o->fair_interval_ns = (uint64_t)(s1 * 1e9);
    } else if (strcmp(key, "aging") == 0) {
        char *end;
        errno = 0;
        double s2 = strtod(value, &end);
        if (errno || *end || end == value || !(s2 >= 1 && s2 <= 86400)) {
            snprintf(err, errlen, "aging takes seconds from 1 to 86400, not '%s'", value);
            return -1;
        }
        o->aging_ns = (uint64_t)(s2 * 1e9);
    } else if (strcmp(key, "profile-limits") == 0) {
        if (strcmp(value, "off") == 0) {
            o->profile_margin_pct = 0;
        } else if (!profile_margin_parse(value, &o->profile_margin_pct)) {
            snprintf(err, errlen, "profile-limits takes a margin from 1%% to %u%% (e.g. 20%%), "
                                  "or off, not '%s'", PROFILE_MARGIN_MAX_PCT, value);
            return -1;
        }
    } else if (strcmp(key, "log-level") == 0) {
        enum log_level lv;
        if (!log_parse_level(value, &lv)) {
            snprintf(err, errlen, "unknown log-level '%s' (error, warn, info, debug)", value);
            return -1;
        }
        o->log_level = (int)lv;
    } else {
        snprintf(err, errlen, "unknown setting '%s'", key);
        return -1;
    }
    return 0;
}

static int load_config(struct daemon_options *o, const char *path, bool required)
{
    FILE *f = fopen(path, "re");
    if (!f) {
        if (!required && errno == ENOENT)
            return 0;
        fprintf(stderr, "convgpud: cannot read %s: %s\n", path, strerror(errno));
        return -1;
    }
    char *text = malloc(CONFIG_MAX_BYTES + 1);
    size_t n = text ? fread(text, 1, CONFIG_MAX_BYTES + 1, f) : 0;
    fclose(f);
    if (!text || n > CONFIG_MAX_BYTES) {
        fprintf(stderr, "convgpud: %s: larger than %d bytes\n", path, CONFIG_MAX_BYTES);
        free(text);
        return -1;
    }
    struct daemon_options scratch = *o;
    char err[512];
    int rc = config_parse(text, n, apply_option, &scratch, err, sizeof err);
    free(text);
    if (rc != 0) {
        fprintf(stderr, "convgpud: %s: %s\n", path, err);
        return -1;
    }
    *o = scratch;
    return 0;
}

/* The devices an --emulate list gives ("2x8GiB,16GiB": 3), counted only to check a topology
 * file against them; the emulator validates the list itself. */
static unsigned emulated_count(const char *spec)
{
    unsigned n = 0;
    for (const char *p = spec; *p;) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        char *x = memchr(p, 'x', len);
        unsigned long k = x ? strtoul(p, NULL, 10) : 1;
        n += k > CG_MAX_DEVICES ? CG_MAX_DEVICES : (unsigned)k;
        p += len + (end != NULL);
    }
    return n;
}

/* --topology models the emulated node only, and must name no GPU it lacks. */
static int check_topology(const struct daemon_options *o)
{
    if (!o->emulate[0]) {
        fprintf(stderr, "convgpud: --topology describes the emulated GPUs' wiring and needs "
                        "--emulate; real GPUs' wiring is read from NVML\n");
        return -1;
    }
    static cg_topo t;
    char why[PATH_MAX + 256];
    if (cg_topo_load(o->topology, &t, why, sizeof why) != 0) {
        fprintf(stderr, "convgpud: --topology: %s\n", why);
        return -1;
    }
    unsigned n = emulated_count(o->emulate);
    if (t.ngpus > n) {
        fprintf(stderr, "convgpud: --topology: %s names GPU %u, but --emulate %s gives %u\n",
                o->topology, t.ngpus - 1, o->emulate, n);
        return -1;
    }
    return 0;
}

/* Returns 0 to run, 1 to exit 0 (help, version), 2 on bad usage. */
static int parse_args(int argc, char **argv, struct daemon_options *o)
{
    enum { O_CONFIG = 1000, O_FOREGROUND, O_VERSION, O_ROUTES, O_SETTING };
    static const struct option opts[] = {
        {"config", required_argument, NULL, O_CONFIG},
        {"runtime-dir", required_argument, NULL, O_SETTING},
        {"emulate", required_argument, NULL, O_SETTING},
        {"topology", required_argument, NULL, O_SETTING},
        {"policy", required_argument, NULL, O_SETTING},
        {"placement", required_argument, NULL, O_SETTING},
        {"fair-share", required_argument, NULL, O_SETTING},
        {"oversubscribe", required_argument, NULL, O_SETTING},
        {"reserve", required_argument, NULL, O_SETTING},
        {"context-charge", required_argument, NULL, O_SETTING},
        {"granularity", required_argument, NULL, O_SETTING},
        {"metrics", required_argument, NULL, O_SETTING},
        {"log-level", required_argument, NULL, O_SETTING},
        {"control-group", required_argument, NULL, O_SETTING},
        {"operators-group", required_argument, NULL, O_SETTING},
        {"user-memory-quota", required_argument, NULL, O_SETTING},
        {"user-max-containers", required_argument, NULL, O_SETTING},
        {"default-gpu-compute", required_argument, NULL, O_SETTING},
        {"default-compute-mode", required_argument, NULL, O_SETTING},
        {"api-idle-timeout", required_argument, NULL, O_SETTING},
        {"api-max-connections", required_argument, NULL, O_SETTING},
        {"api-user-connections", required_argument, NULL, O_SETTING},
        {"api-user-followers", required_argument, NULL, O_SETTING},
        {"api-request-timeout", required_argument, NULL, O_SETTING},
        {"max-client-connections", required_argument, NULL, O_SETTING},
        {"user-max-connections", required_argument, NULL, O_SETTING},
        {"user-max-priority", required_argument, NULL, O_SETTING},
        {"watchdog-interval", required_argument, NULL, O_SETTING},
        {"watchdog-tolerance", required_argument, NULL, O_SETTING},
        {"watchdog-kill", required_argument, NULL, O_SETTING},
        {"swap", required_argument, NULL, O_SETTING},
        {"swap-limit", required_argument, NULL, O_SETTING},
        {"swap-hold-share", required_argument, NULL, O_SETTING},
        {"profile-max-keys", required_argument, NULL, O_SETTING},
        {"profile-max-bytes", required_argument, NULL, O_SETTING},
        {"aging", required_argument, NULL, O_SETTING},
        {"fair-interval", required_argument, NULL, O_SETTING},
        {"profile-limits", required_argument, NULL, O_SETTING},
        {"foreground", no_argument, NULL, O_FOREGROUND},
        {"version", no_argument, NULL, O_VERSION},
        {"routes", no_argument, NULL, O_ROUTES},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *env_dir = getenv("CONVGPU_RUNTIME_DIR");
    snprintf(o->runtime_dir, sizeof o->runtime_dir, "%s",
             env_dir && *env_dir ? env_dir : "/run/convgpu");
    o->granularity = 2ull << 20;
    o->log_level = LOG_INFO;
    o->watchdog_interval = 5;
    o->api_idle_timeout = 30;
    o->api_max_connections = 512;
    o->api_user_connections = 32;
    o->api_user_followers = 4;
    o->api_request_timeout = 10;
    o->watchdog_tolerance = 64ull << 20;
    /* A single-user host keeps working (one user may hold the whole node); a shared host sets a
     * quota. 64 containers is far beyond what one user runs on a node, and bounds what one user
     * can make the daemon hold (a socket, a ledger and descriptors per container). */
    o->user_memory_quota_pct = 100;
    o->user_max_containers = 64;
    o->default_compute_pct = 0;
    o->default_compute_mode = CG_COMPUTE_ELASTIC;
    /* Half the swap budget for tenants' own holds, the other half always the scheduler's and
     * the operators' (docs/SECURITY.md, "Held swaps and profile records"). */
    o->swap_hold_pct = 50;
    o->profile_max_keys = PROFILE_MAX_KEYS_DEFAULT;
    o->profile_max_bytes = PROFILE_MAX_BYTES_DEFAULT;

    /* First pass: help, version and the configuration file, which flags then override. */
    const char *config = NULL;
    int c, idx;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "h", opts, &idx)) != -1) {
        if (c == 'h') {
            usage(stdout);
            return 1;
        }
        if (c == O_VERSION) {
            printf("convgpud %s\n", CONVGPU_VERSION);
            return 1;
        }
        if (c == O_ROUTES) {
            /* The control API's routes and who may call each (api_route.h). */
            for (size_t i = 0; i < api_nroutes; i++)
                printf("%-6s %-32s %s\n", api_routes[i].method, api_routes[i].path,
                       api_may_name(api_routes[i].may));
            return 1;
        }
        if (c == O_CONFIG)
            config = optarg;
    }
    if (load_config(o, config ? config : CONFIG_DEFAULT_PATH, config != NULL) != 0)
        return 2;

    optind = 1;
    opterr = 1;
    while ((c = getopt_long(argc, argv, "h", opts, &idx)) != -1) {
        char err[512];
        switch (c) {
        case O_SETTING:
            if (apply_option(o, opts[idx].name, optarg, err, sizeof err) != 0) {
                fprintf(stderr, "convgpud: --%s\n", err);
                return 2;
            }
            break;
        case O_FOREGROUND:
            o->foreground = true;
            break;
        case O_CONFIG:
            break;
        default:
            usage(stderr);
            return 2;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "convgpud: unexpected argument '%s' (see --help)\n", argv[optind]);
        return 2;
    }
    if (o->topology[0] && check_topology(o) != 0)
        return 2;
    log_set_level((enum log_level)o->log_level);
    return 0;
}

static void write_pid(const struct daemon *d, int fd)
{
    char buf[32];
    int n = snprintf(buf, sizeof buf, "%d\n", (int)getpid());
    if (ftruncate(fd, 0) != 0 || pwrite(fd, buf, (size_t)n, 0) != n)
        log_warn("cannot write %s/convgpud.pid", d->opt.runtime_dir);
}

static int lock_runtime_dir(struct daemon *d)
{
    int fd = openat(d->rd.fd, "convgpud.pid", O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (fd < 0) {
        log_error("cannot open %s/convgpud.pid: %s", d->rd.path, strerror(errno));
        return -1;
    }
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        log_error("another convgpud is running on %s", d->opt.runtime_dir);
        close(fd);
        return -1;
    }
    write_pid(d, fd);
    return fd; /* held open (and locked) for the daemon's life */
}

/* The soft descriptor limit is raised to the hard one (every connection is a descriptor), and
 * the connection bounds are fitted inside it (fdbudget.h); what does not fit is said. */
static void plan_descriptors(struct daemon_options *o)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
        return;
    if (rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
        getrlimit(RLIMIT_NOFILE, &rl);
    }
    struct fdbudget b = {.nofile = rl.rlim_cur == RLIM_INFINITY ? 1ul << 20 : rl.rlim_cur,
                         .api_max_connections = o->api_max_connections,
                         .max_client_connections = o->max_client_connections,
                         .user_max_connections = o->user_max_connections};
    char warning[512];
    if (fdbudget_plan(&b, warning, sizeof warning) != 0)
        log_warn("%s", warning);
    o->max_client_connections = b.max_client_connections;
    o->user_max_connections = b.user_max_connections;
    log_info("connections: control API %u (%u per user), container sockets %u (%u per user), "
             "descriptor limit %lu",
             o->api_max_connections, o->api_user_connections, o->max_client_connections,
             o->user_max_connections, b.nofile);
}

static int open_control_socket(struct daemon *d)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    int n = snprintf(sa.sun_path, sizeof sa.sun_path, "%s/control.sock", d->opt.runtime_dir);
    if (n < 0 || (size_t)n >= sizeof sa.sun_path) {
        log_error("runtime dir too long for a socket path");
        return -1;
    }
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    unlink(sa.sun_path);
    mode_t old = umask(0117); /* created 0660: owner and group only */
    int rc = bind(fd, (struct sockaddr *)&sa, sizeof sa);
    umask(old);
    if (rc != 0 || listen(fd, SOMAXCONN) != 0) {
        log_error("cannot listen on %s: %s", sa.sun_path, strerror(errno));
        close(fd);
        return -1;
    }
    if (d->opt.control_group[0]) {
        struct group *g = getgrnam(d->opt.control_group);
        if (!g || chown(sa.sun_path, (uid_t)-1, g->gr_gid) != 0) {
            log_error("cannot give %s to group %s: %s", sa.sun_path, d->opt.control_group,
                      g ? strerror(errno) : "no such group");
            close(fd);
            return -1;
        }
    }
    return fd;
}

static void resolve_paths(struct daemon *d)
{
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0)
        snprintf(exe, sizeof exe, "/usr/bin/convgpud");
    else
        exe[n] = '\0';
    snprintf(d->exe_dir, sizeof d->exe_dir, "%s", dirname(exe));
    const char *lib = getenv("CONVGPU_LIB_DIR");
    char libdir[PATH_MAX];
    if (lib && *lib)
        snprintf(libdir, sizeof libdir, "%s", lib);
    else
        snprintf(libdir, sizeof libdir, "%.*s/../lib", (int)(sizeof libdir - 8), d->exe_dir);
    char real[PATH_MAX];
    if (realpath(libdir, real))
        snprintf(libdir, sizeof libdir, "%s", real);
    /* The build tree has lib/libconvgpu.so; an installation has lib/convgpu/libconvgpu.so. */
    char probe[PATH_MAX + 32];
    snprintf(probe, sizeof probe, "%s/libconvgpu.so", libdir);
    if (access(probe, R_OK) != 0) {
        snprintf(probe, sizeof probe, "%s/convgpu/libconvgpu.so", libdir);
        if (access(probe, R_OK) == 0)
            strncat(libdir, "/convgpu", sizeof libdir - strlen(libdir) - 1);
    }
    snprintf(d->lib_path, sizeof d->lib_path, "%.*s/libconvgpu.so", (int)(sizeof d->lib_path - 20), libdir);
    snprintf(d->emu_dir, sizeof d->emu_dir, "%.*s/emu", (int)(sizeof d->emu_dir - 8), libdir);
    snprintf(d->emu_state, sizeof d->emu_state, "%.*s/emu/state", (int)(sizeof d->emu_state - 16),
             d->opt.runtime_dir);
}

static int signal_fd = -1;

static void on_signal(void *ctx, uint32_t events)
{
    (void)events;
    struct daemon *d = ctx;
    struct signalfd_siginfo si;
    while (read(signal_fd, &si, sizeof si) == (ssize_t)sizeof si) {
        log_info("signal %u received", si.ssi_signo);
        d->stop = 1;
    }
}

int main(int argc, char **argv)
{
    static struct daemon d;
    int rc = parse_args(argc, argv, &d.opt);
    /* Test-only fault injection (tests/interpose/test_lost_reply.sh); never set in production. */
    const char *crash = getenv("CONVGPUD_TEST_CRASH");
    if (crash && strncmp(crash, "before-charge:", 14) == 0)
        d.crash_before_charge = strtoul(crash + 14, NULL, 10);
    else if (crash && strncmp(crash, "after-charge:", 13) == 0)
        d.crash_after_charge = strtoul(crash + 13, NULL, 10);
    else if (crash && strncmp(crash, "swap-reported:", 14) == 0)
        d.crash_swap_reported = strtoul(crash + 14, NULL, 10);
    else if (crash && strncmp(crash, "swap-in-ordered:", 16) == 0)
        d.crash_swap_in_ordered = strtoul(crash + 16, NULL, 10);
    /* Test-only: a long fallback poll shows that the processes' notices end a swap. */
    const char *swap_poll = getenv("CONVGPUD_TEST_SWAP_POLL_MS");
    long poll_ms = swap_poll ? strtol(swap_poll, NULL, 10) : 0;
    if (poll_ms > 0 && poll_ms <= 3600000)
        d.swap_poll_ms = (int)poll_ms;
    if (rc)
        return rc == 1 ? 0 : 2;

    char err[512];
    umask(022);
    if (rundir_open(d.opt.runtime_dir, &d.rd, err, sizeof err) != 0) {
        log_error("%s", err);
        return 1;
    }
    snprintf(d.opt.runtime_dir, sizeof d.opt.runtime_dir, "%s", d.rd.path);
    resolve_paths(&d);
    char sub[PATH_MAX + 16];
    int lock_fd = lock_runtime_dir(&d);
    if (lock_fd < 0)
        return 1;
    if (d.opt.emulate[0]) {
        if (mkdirat(d.rd.fd, "emu", 0755) != 0 && errno != EEXIST) {
            log_error("cannot create %s/emu: %s", d.rd.path, strerror(errno));
            return 1;
        }
        setenv("CONVGPU_EMU_DEVICES", d.opt.emulate, 1);
        setenv("CONVGPU_EMU_STATE", d.emu_state, 1);
        /* The daemon's own (emulated) NVML reads the same wiring its containers see. */
        if (d.opt.topology[0])
            setenv("CONVGPU_EMU_TOPOLOGY", d.opt.topology, 1);
        else
            unsetenv("CONVGPU_EMU_TOPOLOGY");
        const char *g = getenv("CONVGPU_EMU_GRANULARITY");
        uint64_t gv;
        const char *e;
        if (g && cg_parse_size(g, &gv, &e) == 0 && gv)
            d.opt.granularity = gv;
    }

    signal(SIGPIPE, SIG_IGN);
    d.spare_fd = -1;
    fdspare_open(&d);
    plan_descriptors(&d.opt);
    if (gpu_discover(&d, err, sizeof err) != 0) {
        log_error("%s", err);
        return 1;
    }

    if (!d.opt.swap) {
        d.opt.swap_limit = 0;
    } else if (!d.opt.swap_limit_set) {
        long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
        d.opt.swap_limit = pages > 0 && page > 0 ? (uint64_t)pages * (uint64_t)page / 2 : 0;
    }
    if (d.opt.swap && d.opt.swap_limit == 0)
        log_warn("--swap yes with a swap limit of 0: allocations are swappable, but nothing is "
                 "ever moved out");
    cg_config cfg = {.resume = d.opt.policy, .placement = d.opt.placement, .seed = (uint64_t)getpid(),
                     .sink = decide_sink, .sink_ctx = &d, .swap_limit = d.opt.swap_limit,
                     .swap_hold_pct = d.opt.swap_hold_pct,
                     .aging_step = d.opt.aging_ns};
    metrics_init(&d); /* counts from the first decision on: restored containers' too */
    d.core = cg_core_new(&cfg);
    d.loop = loop_new();
    if (!d.core || !d.loop) {
        log_error("out of memory");
        return 1;
    }
    for (unsigned i = 0; i < d.ndevices; i++) {
        unsigned idx;
        if (d.opt.reserve >= d.devices[i].total) {
            log_error("--reserve is larger than device %u", i);
            return 1;
        }
        if (cg_device_add(d.core, d.devices[i].total, d.opt.reserve, d.devices[i].context_charge,
                          &idx) != CG_OK) {
            log_error("cannot register device %u with the scheduler", i);
            return 1;
        }
    }
    topology_read(&d);

    snprintf(sub, sizeof sub, "%s/state.db", d.opt.runtime_dir);
    d.store = store_open(sub, err, sizeof err);
    if (!d.store) {
        log_error("%s", err);
        return 1;
    }
    char val[64];
    cg_resume_policy rp;
    cg_placement_policy pp;
    /* Policies changed through the API persist across restarts unless set explicitly. */
    if (!d.opt.policy_explicit) {
        if (store_get(d.store, "resume_policy", val, sizeof val) == 0 &&
            cg_resume_policy_parse(val, &rp))
            cg_set_resume_policy(d.core, rp, loop_now_ns());
        if (store_get(d.store, "placement_policy", val, sizeof val) == 0 &&
            cg_placement_policy_parse(val, &pp))
            cg_set_placement_policy(d.core, pp);
    }
    if (cg_set_fair_share(d.core, d.opt.fair_share, loop_now_ns()) != CG_OK) {
        log_error("out of memory");
        return 1;
    }
    tenant_load(&d);
    store_each_container(d.store, restore_container, &d);
    gang_relink(&d);
    if (oversub_start(&d, err, sizeof err) != 0) {
        log_error("%s", err);
        return 1;
    }

    d.control_fd = open_control_socket(&d);
    if (d.control_fd < 0)
        return 1;
    if (api_start(&d, d.control_fd, err, sizeof err) != 0) {
        log_error("%s", err);
        return 1;
    }
    if (d.opt.metrics_addr[0] && metrics_listen(&d, d.opt.metrics_addr, err, sizeof err) != 0) {
        log_error("%s", err);
        return 1;
    }

    if (!d.opt.foreground && daemon(1, 1) != 0) {
        log_error("cannot detach: %s", strerror(errno));
        return 1;
    }
    write_pid(&d, lock_fd); /* detaching changed it */
    /* After detaching: epoll is not woken for signals of a child through a signalfd its parent
     * made (a detached daemon ignored SIGTERM). */
    sigset_t mask;
    sigemptyset(&mask);
    sigaddset(&mask, SIGINT);
    sigaddset(&mask, SIGTERM);
    sigprocmask(SIG_BLOCK, &mask, NULL);
    signal_fd = signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC);
    if (signal_fd < 0 || loop_add(d.loop, signal_fd, EPOLLIN, on_signal, &d) != 0) {
        log_error("cannot watch signals");
        return 1;
    }
    if (api_publish_version(&d, err, sizeof err) != 0)
        log_warn("%s", err);
    log_info("ready: %u device(s), policy %s, placement %s, control socket %s/control.sock%s",
             d.ndevices, cg_resume_policy_name(cg_get_resume_policy(d.core)),
             cg_placement_policy_name(cg_get_placement_policy(d.core)), d.opt.runtime_dir,
             d.opt.emulate[0] ? " (emulated GPU)" : "");

    uint64_t last_reap = loop_now_ns();
    while (!d.stop) {
        int t = api_timeout_ms(&d), tm = metrics_timeout_ms(&d), tw = watchdog_tick(&d);
        int tc = compute_tick(&d), ts = swap_tick(&d), ta = adaptive_tick(&d);
        int tf = decide_tick(&d);
        if (tf >= 0 && (t < 0 || tf < t))
            t = tf;
        if (ta >= 0 && (t < 0 || ta < t))
            t = ta;
        if (tw >= 0 && (t < 0 || tw < t))
            t = tw;
        if (ts >= 0 && (t < 0 || ts < t))
            t = ts;
        if (tc >= 0 && (t < 0 || tc < t))
            t = tc;
        if (t < 0 || t > 1000)
            t = 1000;
        if (tm >= 0 && tm < t)
            t = tm;
        if (loop_run_once(d.loop, t) < 0) {
            log_error("event loop: %s", strerror(errno));
            break;
        }
        api_poll(&d);
        metrics_poll(&d);
        uint64_t now = loop_now_ns();
        if (now - last_reap > 1000000000ull) {
            restore_reap(&d);
            client_reap_silent(&d);
            profile_sample(&d);
            last_reap = now;
        }
    }
    log_info("stopping; containers and process accounts are kept for the next start");
    api_stop(&d);
    metrics_stop(&d);
    watchdog_free(&d);
    compute_stop(&d);
    close(d.control_fd);
    char ctl[PATH_MAX + 16];
    snprintf(ctl, sizeof ctl, "%s/control.sock", d.opt.runtime_dir);
    unlink(ctl);
    snprintf(ctl, sizeof ctl, "%s/" API_INFO_FILE, d.opt.runtime_dir);
    unlink(ctl);
    store_close(d.store);
    cg_core_free(d.core);
    loop_free(d.loop);
    rundir_close(&d.rd);
    return 0;
}
