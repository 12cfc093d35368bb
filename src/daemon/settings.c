/* settings.c — the table of the daemon's settings (settings.h). Common kinds (a whole number in
 * a range, a size, yes/no) are parsed from the row alone; a setting with its own rules has a
 * small parser beside the table. Every refusal reads "NAME takes WHAT, not 'VALUE'" unless the
 * setting has more to say (a topology file's own error, a group that does not exist). */
#include "settings.h"

#include <ctype.h>
#include <errno.h>
#include <grp.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "adaptive.h"
#include "daemon.h"
#include "log.h"
#include "oversub.h"
#include "profile.h"
#include "size.h"
#include "topology_file.h"

enum setting_kind {
    K_UINT,   /* unsigned, min..max */
    K_SIZE,   /* uint64_t bytes (cg_parse_size), at least min */
    K_BOOL,   /* bool: yes|no (true|false) */
    K_CUSTOM, /* parse() */
};

struct setting {
    const char *name;
    const char *arg;  /* what --help shows after the flag */
    const char *def;  /* the default, applied through the parser at start; NULL: zero/none */
    const char *help; /* one paragraph, wrapped by --help; says the default in words */
    enum setting_kind kind;
    size_t offset;    /* of the field in struct daemon_options (K_UINT, K_SIZE, K_BOOL) */
    unsigned long long min, max;
    const char *takes; /* the words of a refusal: "NAME takes TAKES, not 'VALUE'" */
    int (*parse)(struct daemon_options *o, const char *value, char *err, size_t errlen);
};

#define OPT(field) offsetof(struct daemon_options, field)

/* ---- settings with rules of their own ------------------------------------------------------ */

static int p_runtime_dir(struct daemon_options *o, const char *value, char *err, size_t errlen)
{
    if (value[0] != '/' || strlen(value) >= sizeof o->runtime_dir - 80) {
        snprintf(err, errlen, "runtime-dir must be an absolute path of at most %zu characters",
                 sizeof o->runtime_dir - 80);
        return -1;
    }
    snprintf(o->runtime_dir, sizeof o->runtime_dir, "%s", value);
    return 0;
}

static int p_emulate(struct daemon_options *o, const char *value, char *err, size_t errlen)
{
    if (strlen(value) >= sizeof o->emulate) {
        snprintf(err, errlen, "emulate takes a device list such as 5GiB or 4x8GiB");
        return -1;
    }
    snprintf(o->emulate, sizeof o->emulate, "%s", value);
    return 0;
}

static int p_topology(struct daemon_options *o, const char *value, char *err, size_t errlen)
{
    /* Parsed here so that a bad file stops the daemon before anything starts; the emulated NVML
     * reads it again from the absolute path. */
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
    return 0;
}

static int p_policy(struct daemon_options *o, const char *value, char *err, size_t errlen)
{
    o->policy_explicit = true;
    if (!cg_resume_policy_parse(value, &o->policy)) {
        snprintf(err, errlen, "unknown policy '%s' (fifo, best-fit, recent, random, %s)", value,
                 cg_resume_policy_name(CG_RESUME_AGING_FIT));
        return -1;
    }
    return 0;
}

static int p_placement(struct daemon_options *o, const char *value, char *err, size_t errlen)
{
    o->policy_explicit = true;
    if (!cg_placement_policy_parse(value, &o->placement)) {
        snprintf(err, errlen, "unknown placement '%s' (first-fit, least-loaded, binpack, "
                              "load-balance, standalone, interference)", value);
        return -1;
    }
    return 0;
}

static int p_fair_share(struct daemon_options *o, const char *value, char *err, size_t errlen)
{
    if (!cg_fair_mode_parse(value, &o->fair_share)) {
        snprintf(err, errlen, "unknown fair-share mode '%s' (none, static, adaptive)", value);
        return -1;
    }
    return 0;
}

static int p_oversubscribe(struct daemon_options *o, const char *value, char *err, size_t errlen)
{
    return oversub_parse(value, &o->oversub, err, errlen) != 0 ? -1 : 0;
}

static int p_granularity(struct daemon_options *o, const char *value, char *err, size_t errlen)
{
    uint64_t v;
    const char *why;
    if (cg_parse_size(value, &v, &why) != 0 || v == 0 || v % CG_LEDGER_PAGE || (v & (v - 1))) {
        snprintf(err, errlen, "granularity must be a power of two multiple of 4KiB, not '%s'",
                 value);
        return -1;
    }
    o->granularity = v;
    return 0;
}

static int p_metrics(struct daemon_options *o, const char *value, char *err, size_t errlen)
{
    if (strlen(value) >= sizeof o->metrics_addr || !strchr(value, ':')) {
        snprintf(err, errlen, "metrics takes ADDR:PORT, e.g. 127.0.0.1:9400");
        return -1;
    }
    snprintf(o->metrics_addr, sizeof o->metrics_addr, "%s", value);
    return 0;
}

static int p_pause_fallback(struct daemon_options *o, const char *value, char *err,
                            size_t errlen)
{
    if (strcmp(value, "none") != 0 && strcmp(value, "swap") != 0) {
        snprintf(err, errlen, "pause-fallback takes none or swap, not '%s'", value);
        return -1;
    }
    o->pause_fallback_swap = strcmp(value, "swap") == 0;
    return 0;
}

static int p_auto_pause(struct daemon_options *o, const char *value, char *err, size_t errlen)
{
    if (strcmp(value, "yes") != 0 && strcmp(value, "no") != 0) {
        snprintf(err, errlen, "auto-pause takes yes or no, not '%s'", value);
        return -1;
    }
    o->auto_pause = strcmp(value, "yes") == 0;
    return 0;
}

static int p_follow_stop(struct daemon_options *o, const char *value, char *err,
                         size_t errlen)
{
    if (strcmp(value, "off") == 0) {
        o->follow_stop[0] = '\0';
        return 0;
    }
    bool name_like = value[0] != '\0';
    for (const char *v = value; *v; v++)
        if (!isalnum((unsigned char)*v) && !strchr("-_.", *v))
            name_like = false;
    if (!name_like || strlen(value) >= sizeof o->follow_stop) {
        snprintf(err, errlen, "follow-stop takes a container id prefix such as slurm- (at most "
                              "%zu characters) or off", sizeof o->follow_stop - 1);
        return -1;
    }
    snprintf(o->follow_stop, sizeof o->follow_stop, "%s", value);
    return 0;
}

static int p_checkpoint_helper(struct daemon_options *o, const char *value, char *err,
                               size_t errlen)
{
    if (value[0] != '/' || strlen(value) >= sizeof o->checkpoint_helper) {
        snprintf(err, errlen, "checkpoint-helper takes an absolute path, not '%s'", value);
        return -1;
    }
    snprintf(o->checkpoint_helper, sizeof o->checkpoint_helper, "%s", value);
    return 0;
}

static int p_control_group(struct daemon_options *o, const char *value, char *err, size_t errlen)
{
    if (strlen(value) >= sizeof o->control_group || !getgrnam(value)) {
        snprintf(err, errlen, "control-group: no group named '%s'", value);
        return -1;
    }
    snprintf(o->control_group, sizeof o->control_group, "%s", value);
    return 0;
}

static int p_operators_group(struct daemon_options *o, const char *value, char *err,
                             size_t errlen)
{
    struct group *g = strlen(value) < sizeof o->operators_group ? getgrnam(value) : NULL;
    if (!g) {
        snprintf(err, errlen, "operators-group: no group named '%s'", value);
        return -1;
    }
    snprintf(o->operators_group, sizeof o->operators_group, "%s", value);
    o->operators_gid = g->gr_gid;
    return 0;
}

static int p_user_memory_quota(struct daemon_options *o, const char *value, char *err,
                               size_t errlen)
{
    size_t n = strlen(value);
    uint64_t v;
    const char *why;
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
        snprintf(err, errlen, "user-memory-quota takes a size (e.g. 8GiB) or a percentage of the "
                              "node's capacity (e.g. 50%%), not '%s'", value);
        return -1;
    } else {
        o->user_memory_quota = v;
    }
    return 0;
}

static int p_default_gpu_compute(struct daemon_options *o, const char *value, char *err,
                                 size_t errlen)
{
    unsigned pct = 0;
    if (strcmp(value, "none") != 0 && !cg_compute_pct_parse(value, &pct)) {
        snprintf(err, errlen, "default-gpu-compute takes a whole percentage from 1 to 100, or "
                              "none, not '%s'", value);
        return -1;
    }
    o->default_compute_pct = pct;
    return 0;
}

static int p_default_compute_mode(struct daemon_options *o, const char *value, char *err,
                                  size_t errlen)
{
    if (!cg_compute_mode_parse(value, &o->default_compute_mode)) {
        snprintf(err, errlen, "default-compute-mode takes hard or elastic, not '%s'", value);
        return -1;
    }
    return 0;
}

/* Seconds as a decimal, within [min, max] (0 allowed where zero0), into *out. */
static bool seconds(const char *value, double min, double max, bool zero0, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(value, &end);
    if (errno || *end || end == value || !((zero0 && v == 0) || (v >= min && v <= max)))
        return false;
    *out = v;
    return true;
}

static int p_watchdog_interval(struct daemon_options *o, const char *value, char *err,
                               size_t errlen)
{
    if (!seconds(value, 0.1, 86400, true, &o->watchdog_interval)) {
        snprintf(err, errlen, "watchdog-interval takes seconds: 0 (off) or 0.1 to 86400");
        return -1;
    }
    return 0;
}

static int p_swap_limit(struct daemon_options *o, const char *value, char *err, size_t errlen)
{
    uint64_t v;
    const char *why;
    if (cg_parse_size(value, &v, &why) != 0) {
        snprintf(err, errlen, "swap-limit: bad size '%s': %s", value, why);
        return -1;
    }
    o->swap_limit = v;
    o->swap_limit_set = true;
    return 0;
}

static int p_swap_hold_share(struct daemon_options *o, const char *value, char *err,
                             size_t errlen)
{
    if (strcmp(value, "0") == 0 || strcmp(value, "0%") == 0) {
        o->swap_hold_pct = 0;
    } else if (!cg_pct_parse(value, 100, &o->swap_hold_pct)) {
        snprintf(err, errlen, "swap-hold-share takes a whole percentage from 0 to 100, not '%s'",
                 value);
        return -1;
    }
    return 0;
}

static int p_fair_interval(struct daemon_options *o, const char *value, char *err, size_t errlen)
{
    double s;
    if (!seconds(value, 1, ADAPTIVE_INTERVAL_MAX_S, false, &s)) {
        snprintf(err, errlen, "fair-interval takes seconds from 1 to %d, not '%s'",
                 ADAPTIVE_INTERVAL_MAX_S, value);
        return -1;
    }
    o->fair_interval_ns = (uint64_t)(s * 1e9);
    return 0;
}

static int p_aging(struct daemon_options *o, const char *value, char *err, size_t errlen)
{
    double s;
    if (!seconds(value, 1, 86400, false, &s)) {
        snprintf(err, errlen, "aging takes seconds from 1 to 86400, not '%s'", value);
        return -1;
    }
    o->aging_ns = (uint64_t)(s * 1e9);
    return 0;
}

static int p_profile_limits(struct daemon_options *o, const char *value, char *err,
                            size_t errlen)
{
    if (strcmp(value, "off") == 0) {
        o->profile_margin_pct = 0;
    } else if (!profile_margin_parse(value, &o->profile_margin_pct)) {
        snprintf(err, errlen, "profile-limits takes a margin from 1%% to %u%% (e.g. 20%%), or "
                              "off, not '%s'", PROFILE_MARGIN_MAX_PCT, value);
        return -1;
    }
    return 0;
}

static int p_log_level(struct daemon_options *o, const char *value, char *err, size_t errlen)
{
    enum log_level lv;
    if (!log_parse_level(value, &lv)) {
        snprintf(err, errlen, "unknown log-level '%s' (error, warn, info, debug)", value);
        return -1;
    }
    o->log_level = (int)lv;
    return 0;
}

/* ---- the table ------------------------------------------------------------------------------ */

#define CUSTOM(fn) K_CUSTOM, 0, 0, 0, NULL, fn
#define UINT(field, lo, hi, words) K_UINT, OPT(field), lo, hi, words, NULL
#define SIZE(field, lo) K_SIZE, OPT(field), lo, 0, "a size (e.g. 64MiB)", NULL
#define BOOL(field) K_BOOL, OPT(field), 0, 0, "yes or no", NULL

static const struct setting settings[] = {
    {"runtime-dir", "DIR", NULL, /* $CONVGPU_RUNTIME_DIR or /run/convgpu: settings_defaults */
     "sockets, ledgers and state (default /run/convgpu, or $CONVGPU_RUNTIME_DIR)",
     CUSTOM(p_runtime_dir)},
    {"emulate", "SPEC", NULL, "run on the emulated GPU: 5GiB, 4x8GiB, 8GiB,16GiB",
     CUSTOM(p_emulate)},
    {"topology", "FILE", NULL,
     "with --emulate: how the emulated GPUs are wired (NVLink, PCIe switches, sockets; "
     "docs/OPERATIONS.md); real GPUs' wiring is read from NVML",
     CUSTOM(p_topology)},
    {"policy", "NAME", NULL, "resume policy: fifo (default), best-fit, recent, random, aging-fit",
     CUSTOM(p_policy)},
    {"placement", "NAME", NULL,
     "device placement: first-fit (default), least-loaded, binpack, load-balance, standalone "
     "(by profiled utilisation/application), interference (least measured slowdown beside "
     "the residents, from the stored interference matrix)",
     CUSTOM(p_placement)},
    {"fair-share", "MODE", NULL,
     "tenants' fair share of each device: none (default), static (capacity x weight / active "
     "weights), adaptive (seed 001's Eq. 1 over job counts and the running jobs' profiles)",
     CUSTOM(p_fair_share)},
    {"fair-interval", "SECONDS", NULL,
     "adaptive: how often the profiles are re-read (default 30; also at every container's start "
     "and end)",
     CUSTOM(p_fair_interval)},
    {"oversubscribe", "F|LIST|adaptive", NULL,
     "sharing factor: each GPU promises capacity x F to kubelet and Slurm, F from 1.0 (default: "
     "no more than it has) to 4.0; per GPU as 0=2,1=1.5; adaptive: 1.0-2.0 from profiled peaks "
     "and the swap budget. Admission is unchanged (docs/SCHEDULING.md, Sharing factor)",
     CUSTOM(p_oversubscribe)},
    {"reserve", "SIZE", NULL, "memory kept back on every device (default 0)", SIZE(reserve, 0)},
    {"context-charge", "SIZE", NULL, "per-process context charge (default: measured per device)",
     SIZE(context_charge, 0)},
    {"granularity", "SIZE", "2MiB", "allocation rounding (default 2MiB)",
     CUSTOM(p_granularity)},
    {"control-group", "NAME", NULL, "members of this group may use the control socket (0660)",
     CUSTOM(p_control_group)},
    {"operators-group", "NAME", NULL,
     "members see and act on every container through the control socket (default: only root "
     "and the daemon's user); everyone else sees only its own containers",
     CUSTOM(p_operators_group)},
    /* A single-user host keeps working (one user may hold the whole node); a shared host sets
     * a quota. */
    {"user-memory-quota", "SIZE|N%", "100%",
     "the GPU-memory limits one user's containers may add up to, in bytes or percent of the "
     "node's capacity (default 100%); root, the daemon's user and operators are exempt",
     CUSTOM(p_user_memory_quota)},
    /* Far beyond what one user runs on a node, and a bound on what one user can make the daemon
     * hold (a socket, a ledger and descriptors per container). */
    {"user-max-containers", "N", "64", "containers one user may hold (default 64; 0 = no bound)",
     UINT(user_max_containers, 0, 100000, "a number from 0 (no bound) to 100000")},
    {"default-gpu-compute", "PCT|none", NULL,
     "compute share (whole percent of one GPU's time, 1-100) of a container created without one "
     "(default none: no compute limit)",
     CUSTOM(p_default_gpu_compute)},
    {"default-compute-mode", "hard|elastic", "elastic",
     "mode of a share given without one (default elastic: may use time nobody else wants; hard: "
     "never more)",
     CUSTOM(p_default_compute_mode)},
    {"metrics", "ADDR:PORT", NULL,
     "also serve Prometheus metrics on TCP (default off; /metrics on the control socket is "
     "always there)",
     CUSTOM(p_metrics)},
    {"api-max-connections", "N", "512",
     "control-socket connections in all (default 512; an eighth, at least 8, is kept for root "
     "and operators)",
     UINT(api_max_connections, 16, 65536, "a whole number from 16 to 65536")},
    {"api-user-connections", "N", "32",
     "control-socket connections one user who is not root or an operator may hold (default 32)",
     UINT(api_user_connections, 1, 65536, "a whole number from 1 to 65536")},
    {"api-user-followers", "N", "4",
     "event streams (GET /v1/events?follow=1) one such user may hold (default 4)",
     UINT(api_user_followers, 0, 64, "a whole number from 0 to 64")},
    {"api-request-timeout", "S", "10",
     "seconds a request may take to arrive, however slowly it trickles (default 10; 1-3600)",
     UINT(api_request_timeout, 1, 3600, "whole seconds from 1 to 3600")},
    {"max-client-connections", "N", NULL,
     "container-socket connections in all (default: what the descriptor limit leaves; "
     "docs/SECURITY.md)",
     UINT(max_client_connections, 64, 1000000, "a whole number from 64 to 1000000")},
    {"user-max-connections", "N", NULL,
     "container-socket connections one user's containers may hold together (default: a quarter "
     "of the total; root's containers are bounded by the total only)",
     UINT(user_max_connections, 1, 1000000, "a whole number from 1 to 1000000")},
    {"user-max-priority", "N", "0",
     "the highest priority (0-9) a user who is not root or an operator may give its containers "
     "(default 0); above it, and for exclusive GPUs, a tenant needs an allowance that root gives "
     "with convgpu tenant set (docs/SECURITY.md)",
     UINT(user_max_priority, 0, 9, "a whole number from 0 to 9")},
    {"api-idle-timeout", "S", "30",
     "seconds a control-socket connection may stay silent before it is closed (default 30; "
     "1-3600; event followers waiting for events are exempt)",
     UINT(api_idle_timeout, 1, 3600, "whole seconds from 1 to 3600")},
    {"watchdog-interval", "S", "5",
     "seconds between NVML cross-checks of every process's GPU memory (default 5; 0 = off)",
     CUSTOM(p_watchdog_interval)},
    {"watchdog-tolerance", "SIZE", "64MiB",
     "how far a container may exceed its limit by NVML before it is flagged (default 64MiB)",
     SIZE(watchdog_tolerance, 0)},
    {"watchdog-kill", "yes|no", "no", "kill what the watchdog flags (default no: report only)",
     BOOL(watchdog_kill)},
    {"swap", "yes|no", "no",
     "make containers' allocations swappable, and let the scheduler move waiting or "
     "lower-priority containers to host memory (default no; docs/SWAP.md)",
     BOOL(swap)},
    {"swap-limit", "SIZE", NULL,
     "host memory swapped-out containers may hold together (default: half the host's memory "
     "when --swap yes)",
     CUSTOM(p_swap_limit)},
    /* Half the swap budget for tenants' own holds, the other half always the scheduler's and
     * the operators' (docs/SECURITY.md, "Held swaps and profile records"). */
    {"swap-hold-share", "N%", "50%",
     "the share of --swap-limit that users who are not operators may hold their own containers "
     "out with (convgpu swap), all together, each its tenant's weighted part (default 50%; 0 = "
     "only operators hold); the rest stays for preemption",
     CUSTOM(p_swap_hold_share)},
    {"pause-fallback", "none|swap", "none",
     "what convgpu pause does where the driver has no checkpoint API (R550 and newer have it): "
     "none refuses (501), swap swaps the container out instead (needs --swap yes; "
     "docs/PAUSE.md)",
     CUSTOM(p_pause_fallback)},
    {"auto-pause", "yes|no", "no",
     "whether the scheduler may checkpoint a victim whole (allocations and contexts) where "
     "swapping it frees too little; only with a driver that has the checkpoint API "
     "(docs/SCHEDULING.md, swap or checkpoint for a victim)",
     CUSTOM(p_auto_pause)},
    {"checkpoint-helper", "PATH", NULL,
     "the program that drives the checkpoint API for pause, resume and move (default: "
     "convgpu-checkpoint beside convgpud, else in LIBEXECDIR/convgpu)",
     CUSTOM(p_checkpoint_helper)},
    {"follow-stop", "PREFIX|off", "off",
     "pause a container whose id begins with PREFIX while all its processes are stopped "
     "(SIGSTOP, as Slurm's scontrol suspend does) and resume it when they run again; slurm- "
     "follows Slurm job steps (default off; docs/SLURM.md, Suspend and resume)",
     CUSTOM(p_follow_stop)},
    {"aging", "SECONDS", NULL,
     "waiting this long lifts a container one priority class (default 60; docs/SCHEDULING.md, "
     "Priorities)",
     CUSTOM(p_aging)},
    {"profile-limits", "MARGIN|off", NULL,
     "a container created without a GPU-memory limit gets its profile's peak (learnt from past "
     "runs of the same image or command by the same user) plus MARGIN, 1%-100% (default off: a "
     "limit is required; convgpu profile)",
     CUSTOM(p_profile_limits)},
    {"profile-max-keys", "N", "256",
     "profiles (keys) one tenant keeps; the oldest goes first (default 256)",
     UINT(profile_max_keys, 1, 100000, "a number from 1 to 100000")},
    {"profile-max-bytes", "SIZE", "1MiB",
     "what one tenant's profiles may take in state.db, keys and runs (default 1MiB; at least "
     "16KiB); the oldest first",
     SIZE(profile_max_bytes, PROFILE_MAX_BYTES_MIN)},
    {"log-level", "LEVEL", "info", "error, warn, info (default), debug", CUSTOM(p_log_level)},
};
#define NSETTINGS (sizeof settings / sizeof settings[0])

_Static_assert(PROFILE_MAX_KEYS_DEFAULT == 256 && PROFILE_MAX_BYTES_DEFAULT == (1u << 20),
               "profile-max-keys and profile-max-bytes: the table's defaults are profile.h's");

size_t settings_count(void) { return NSETTINGS; }
const char *settings_name(size_t i) { return i < NSETTINGS ? settings[i].name : NULL; }

static int apply_row(struct daemon_options *o, const struct setting *s, const char *value,
                     char *err, size_t errlen)
{
    char *field = (char *)o + s->offset;
    switch (s->kind) {
    case K_UINT: {
        char *end;
        errno = 0;
        unsigned long long n = strtoull(value, &end, 10);
        if (errno || *end || end == value || value[0] < '0' || value[0] > '9' || n < s->min ||
            n > s->max)
            break;
        *(unsigned *)field = (unsigned)n;
        return 0;
    }
    case K_SIZE: {
        uint64_t v;
        const char *why;
        if (cg_parse_size(value, &v, &why) != 0 || v < s->min)
            break;
        *(uint64_t *)field = v;
        return 0;
    }
    case K_BOOL:
        if (strcmp(value, "yes") == 0 || strcmp(value, "true") == 0) {
            *(bool *)field = true;
            return 0;
        }
        if (strcmp(value, "no") == 0 || strcmp(value, "false") == 0) {
            *(bool *)field = false;
            return 0;
        }
        break;
    case K_CUSTOM:
        return s->parse(o, value, err, errlen);
    }
    if (s->kind == K_SIZE && s->min)
        snprintf(err, errlen, "%s takes a size of at least %lluKiB, not '%s'", s->name,
                 s->min >> 10, value);
    else
        snprintf(err, errlen, "%s takes %s, not '%s'", s->name, s->takes, value);
    return -1;
}

int settings_apply(void *ctx, const char *name, const char *value, char *err, size_t errlen)
{
    for (size_t i = 0; i < NSETTINGS; i++)
        if (strcmp(settings[i].name, name) == 0)
            return apply_row(ctx, &settings[i], value, err, errlen);
    snprintf(err, errlen, "unknown setting '%s'", name);
    return -1;
}

void settings_defaults(struct daemon_options *o)
{
    const char *env_dir = getenv("CONVGPU_RUNTIME_DIR");
    snprintf(o->runtime_dir, sizeof o->runtime_dir, "%s",
             env_dir && *env_dir ? env_dir : "/run/convgpu");
    char err[256];
    for (size_t i = 0; i < NSETTINGS; i++)
        if (settings[i].def && apply_row(o, &settings[i], settings[i].def, err, sizeof err) != 0)
            abort(); /* a default the table's own parser refuses: caught by every test */
}

/* One setting's help: the flag and its argument, then the text wrapped under column 24. */
static void usage_row(FILE *f, const struct setting *s)
{
    char head[64];
    int n = snprintf(head, sizeof head, "  --%s %s", s->name, s->arg);
    fputs(head, f);
    int col = n;
    if (n >= 23) {
        fputs("  ", f);
        col += 2;
    } else {
        col += fprintf(f, "%*s", 24 - n, "");
    }
    const char *p = s->help;
    while (*p) {
        size_t w = strcspn(p, " ");
        if (col + 1 + (int)w > 92 && col > 24) {
            col = fprintf(f, "\n%24s", "") - 1;
        } else if (p != s->help) {
            fputc(' ', f);
            col++;
        }
        fwrite(p, 1, w, f);
        col += (int)w;
        p += w;
        while (*p == ' ')
            p++;
    }
    fputc('\n', f);
}

void settings_usage(FILE *f)
{
    for (size_t i = 0; i < NSETTINGS; i++)
        usage_row(f, &settings[i]);
}
