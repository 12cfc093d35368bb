/* settings.c — the table of the daemon's settings (settings.h). Common kinds (a whole number in
 * a range, a size, yes/no) are parsed from the row alone; a setting with its own rules has a
 * small parser beside the table. Every refusal reads "NAME takes WHAT, not 'VALUE'" unless the
 * setting has more to say (a topology file's own error, a group that does not exist).
 * The pages that describe the settings (convgpud.8's OPTIONS, convgpud.conf.5's KEYS,
 * OPERATIONS.md's synopsis and table, the example configuration file) are printed from the same
 * rows (settings_doc), so a row is the only place a setting is written; `make docs` puts them in
 * the files, the build into the installed man pages, and docs.settings fails when the files are
 * stale. */
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

/* The words of the documentation (doc, default_words, values) are in a small markup that each
 * page renders its own way: `code` is a literal (bold in a man page, code in Markdown), {name}
 * names another setting (--name in convgpud.8, name in convgpud.conf.5 and OPERATIONS.md), and
 * the UTF-8 multiplication sign is roff's \(mu. Nothing else is special. */
struct setting {
    const char *name;
    const char *arg;  /* what --help shows after the flag */
    const char *def;  /* the default, applied through the parser at start; NULL: zero/none */
    const char *default_words; /* where def is NULL: the default as the pages say it */
    const char *help; /* one paragraph, wrapped by --help; says the default in words */
    const char *doc;  /* the pages' paragraph (man pages, OPERATIONS.md), without the default
                       * and the values, which the pages add from the row */
    enum setting_kind kind;
    size_t offset;    /* of the field in struct daemon_options (K_UINT, K_SIZE, K_BOOL) */
    unsigned long long min, max;
    const char *takes; /* the words of a refusal: "NAME takes TAKES, not 'VALUE'" */
    const char *values; /* K_CUSTOM: what it takes, for the pages (the others': from the row) */
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

#define CUSTOM(fn, values) K_CUSTOM, 0, 0, 0, NULL, values, fn
#define UINT(field, lo, hi, words) K_UINT, OPT(field), lo, hi, words, NULL, NULL
#define SIZE(field, lo) K_SIZE, OPT(field), lo, 0, "a size (e.g. 64MiB)", NULL, NULL
#define BOOL(field) K_BOOL, OPT(field), 0, 0, "yes or no", NULL, NULL
#define D(value) value, NULL /* a default the parser applies at start */
#define W(words) NULL, words /* no default value to apply: the pages say what happens */
#define STR_(x) #x
#define STR(x) STR_(x)

static const struct setting settings[] = {
    {"runtime-dir", "DIR", W("`/run/convgpu`, or `$CONVGPU_RUNTIME_DIR`"),
     /* $CONVGPU_RUNTIME_DIR or /run/convgpu: settings_defaults */
     "sockets, ledgers and state (default /run/convgpu, or $CONVGPU_RUNTIME_DIR)",
     "Where sockets, ledgers and the state database live. It must be owned by root or the "
     "daemon's user and writable by nobody else.",
     CUSTOM(p_runtime_dir, "an absolute path")},
    {"emulate", "SPEC", W("off: the node's real GPUs, through NVML"),
     "run on the emulated GPU: 5GiB, 4x8GiB, 8GiB,16GiB",
     "Run on the emulated GPU (package `convgpu-emu`) instead of real ones: one device "
     "(`5GiB`), several equal ones (`4x8GiB`), or a list (`8GiB,16GiB`). Every process started "
     "through convgpu then uses the emulator (its environment carries `LD_LIBRARY_PATH` and "
     "the emulator's variables). Without it the daemon loads the system's "
     "`libnvidia-ml.so.1` and lists the GPUs.",
     CUSTOM(p_emulate, "a device list such as `5GiB`, `4x8GiB`, `8GiB,16GiB`")},
    {"topology", "FILE", W("none"),
     "with --emulate: how the emulated GPUs are wired (NVLink, PCIe switches, sockets; "
     "docs/OPERATIONS.md); real GPUs' wiring is read from NVML",
     "With {emulate}: how the emulated GPUs are wired, a topology file of `nvlink A B [LINKS]`, "
     "`switch`, `multiswitch`, `hostbridge` and `socket` lines (docs/OPERATIONS.md, \"Topology "
     "file\"). The emulated NVML answers the topology calls from it, the daemon reads them back "
     "as it does on real GPUs, and its containers get it as `CONVGPU_EMU_TOPOLOGY`. A file that "
     "does not parse, or names a GPU the node lacks, stops the daemon (exit 2) with the file and "
     "line. On real GPUs the wiring is always read from NVML.",
     CUSTOM(p_topology, "a topology file")},
    {"policy", "NAME", W("`fifo`"),
     "resume policy: fifo (default), best-fit, recent, random, aging-fit",
     "The resume policy: who gets memory when it returns (docs/SCHEDULING.md).",
     CUSTOM(p_policy, "`fifo`, `best-fit`, `recent`, `random`, `aging-fit`")},
    {"placement", "NAME", W("`first-fit`"),
     "device placement: first-fit (default), least-loaded, binpack, load-balance, standalone "
     "(by profiled utilisation/application), interference (least measured slowdown beside "
     "the residents, from the stored interference matrix)",
     "Which GPU a new container goes to: `first-fit`, `least-loaded`, `binpack`, "
     "`load-balance` (least summed profiled utilisation of the applications already there), "
     "`standalone` (one application per GPU where memory allows), `interference` (the GPU "
     "where the measured slowdowns beside the containers already there, from the "
     "interference matrix that `convgpu interfere` saves, are least); docs/SCHEDULING.md.",
     CUSTOM(p_placement, "`first-fit`, `least-loaded`, `binpack`, `load-balance`, "
                         "`standalone`, `interference`")},
    {"fair-share", "MODE", W("`none`"),
     "tenants' fair share of each device: none (default), static (capacity x weight / active "
     "weights), adaptive (seed 001's Eq. 1 over job counts and the running jobs' profiles)",
     "Tenants' fair share of each GPU: `none`, `static` (capacity \u00d7 weight / the "
     "weights of the tenants with a container there), `adaptive` (seed 001's Eq. 1 over each "
     "tenant's job count and its running jobs' profiles; job counts alone until a job has 3 "
     "profiled runs). "
     "A container that would take its tenant over its ceiling waits (docs/OPERATIONS.md, "
     "\"Tenants and fair share\").",
     CUSTOM(p_fair_share, "`none`, `static`, `adaptive`")},
    {"fair-interval", "SECONDS", W("`30`"),
     "adaptive: how often the profiles are re-read (default 30; also at every container's start "
     "and end)",
     "With {fair-share} `adaptive`: how often the running jobs' profiles are read again and the "
     "shares re-evaluated. A container's start or end, and a removed profile, also re-evaluate "
     "them at once.",
     CUSTOM(p_fair_interval, "seconds from `1` to `" STR(ADAPTIVE_INTERVAL_MAX_S) "`")},
    {"oversubscribe", "F|LIST|adaptive", W("`1.0`: a GPU promises no more than it has"),
     "sharing factor: each GPU promises capacity x F to kubelet and Slurm, F from 1.0 (default: "
     "no more than it has) to 4.0; per GPU as 0=2,1=1.5; adaptive: 1.0-2.0 from profiled peaks "
     "and the swap budget. Admission is unchanged (docs/SCHEDULING.md, Sharing factor)",
     "Sharing factor: each GPU promises its capacity \u00d7 F to kubelet (the device plugin's "
     "memory units) and Slurm (`convgpu slurm gres-conf`), published as `promised` and "
     "`oversubscribe` in GET /v1/devices. A list gives GPUs their own (`0=2,1=1.5`; GPUs not "
     "named keep 1.0); `adaptive` derives F per GPU, 1.0 to 2.0, from the peaks of the last "
     "runs on it against their limits and the swap budget (docs/SCHEDULING.md, \"Sharing "
     "factor\"), recomputed at start and whenever a run ends. Admission is unchanged: a limit "
     "above a GPU's capacity is refused, and a container whose request does not fit now waits "
     "or is swapped.",
     CUSTOM(p_oversubscribe, "a decimal F from `1.0` to `4.0`, a list `GPU=F,...`, or "
                             "`adaptive`")},
    {"reserve", "SIZE", W("`0`"), "memory kept back on every device (default 0)",
     "Memory kept back on every device, never assigned to containers (capacity = total - "
     "reserve).",
     SIZE(reserve, 0)},
    {"context-charge", "SIZE", W("measured on each device at start"),
     "per-process context charge (default: measured per device)",
     "What one process's context costs. Without it the daemon measures it on each device by "
     "opening a context in a short-lived child process (the daemon itself never opens one).",
     SIZE(context_charge, 0)},
    {"granularity", "SIZE", D("2MiB"), "allocation rounding (default 2MiB)",
     "Allocation rounding, the driver's granularity.",
     CUSTOM(p_granularity, "a power of two multiple of `4KiB`")},
    {"control-group", "NAME", W("the daemon's group"),
     "members of this group may use the control socket (0660)",
     "Members of this group may use the control socket (mode 0660).",
     CUSTOM(p_control_group, "a group name")},
    {"operators-group", "NAME", W("none: only root and the daemon's user"),
     "members see and act on every container through the control socket (default: only root "
     "and the daemon's user); everyone else sees only its own containers",
     "Members of this group see and act on every container through the control socket, like "
     "root and the daemon's user; everyone else sees and acts only on its own containers.",
     CUSTOM(p_operators_group, "a group name")},
    /* A single-user host keeps working (one user may hold the whole node); a shared host sets
     * a quota. */
    {"user-memory-quota", "SIZE|N%", D("100%"),
     "the GPU-memory limits one user's containers may add up to, in bytes or percent of the "
     "node's capacity (default 100%); root, the daemon's user and operators are exempt",
     "What the GPU-memory limits of one control-socket user's containers may add up to: a size "
     "or a percentage of the node's capacity (the sum of every device's total - reserve); "
     "applied on create and on a limit raise. Root, the daemon's user and operators are "
     "exempt. On a shared host, e.g. `50%`.",
     CUSTOM(p_user_memory_quota, "a size (`8GiB`) or a percentage from `1%` to `100%`")},
    /* Far beyond what one user runs on a node, and a bound on what one user can make the daemon
     * hold (a socket, a ledger and descriptors per container). */
    {"user-max-containers", "N", D("64"),
     "containers one user may hold (default 64; 0 = no bound)",
     "How many containers one user who is not root, the daemon's user or an operator may hold; "
     "`0`: no bound.",
     UINT(user_max_containers, 0, 100000, "a number from 0 (no bound) to 100000")},
    {"default-gpu-compute", "PCT|none", W("`none`: no compute limit"),
     "compute share (whole percent of one GPU's time, 1-100) of a container created without one "
     "(default none: no compute limit)",
     "The compute share (a whole percent of one GPU's time) of a container created without one "
     "(API field `gpu_compute` absent; `null` still means none). A hard default is admitted "
     "like any hard share: the 4th container of a hard 30 on one GPU is refused (409).",
     CUSTOM(p_default_gpu_compute, "a whole percentage from `1` to `100`, or `none`")},
    {"default-compute-mode", "hard|elastic", D("elastic"),
     "mode of a share given without one (default elastic: may use time nobody else wants; hard: "
     "never more)",
     "The mode of a compute share given without one: `elastic` may use time nobody else wants; "
     "`hard` never more than its share.",
     CUSTOM(p_default_compute_mode, "`hard` or `elastic`")},
    {"metrics", "ADDR:PORT", W("off"),
     "also serve Prometheus metrics on TCP (default off; /metrics on the control socket is "
     "always there)",
     "Also serve Prometheus metrics on TCP (`/metrics` on the control socket is always there).",
     CUSTOM(p_metrics, "`ADDR:PORT`, e.g. `127.0.0.1:9400`")},
    {"api-max-connections", "N", D("512"),
     "control-socket connections in all (default 512; an eighth, at least 8, is kept for root "
     "and operators)",
     "Control-socket connections in all. An eighth, at least 8, is kept for root, the daemon's "
     "user and operators, so the integrations' registrations always get in.",
     UINT(api_max_connections, 16, 65536, "a whole number from 16 to 65536")},
    {"api-user-connections", "N", D("32"),
     "control-socket connections one user who is not root or an operator may hold (default 32)",
     "Control-socket connections one user who is not root, the daemon's user or an operator may "
     "hold; past it, 429. When the users' share is full, a user holding clearly fewer than the "
     "heaviest gets in at the heaviest one's oldest idle connection.",
     UINT(api_user_connections, 1, 65536, "a whole number from 1 to 65536")},
    {"api-user-followers", "N", D("4"),
     "event streams (GET /v1/events?follow=1) one such user may hold (default 4)",
     "Event streams (`/v1/events?follow=1`) one user who is not root, the daemon's user or an "
     "operator may hold (64 in all, a quarter kept for root and operators).",
     UINT(api_user_followers, 0, 64, "a whole number from 0 to 64")},
    {"api-request-timeout", "S", D("10"),
     "seconds a request may take to arrive, however slowly it trickles (default 10; 1-3600)",
     "Seconds a request may take to arrive in full, however slowly it trickles. A request being "
     "answered and an event stream have no such deadline.",
     UINT(api_request_timeout, 1, 3600, "whole seconds from 1 to 3600")},
    {"max-client-connections", "N", W("what the descriptor limit leaves"),
     "container-socket connections in all (default: what the descriptor limit leaves; "
     "docs/SECURITY.md)",
     "Container-socket connections of all containers together. The default is what the "
     "descriptor limit leaves once the control API and 256 containers' own files are counted; "
     "the limit is raised to its hard value at start, and the daemon says with the numbers "
     "when the bounds do not fit (docs/SECURITY.md).",
     UINT(max_client_connections, 64, 1000000, "a whole number from 64 to 1000000")},
    {"user-max-connections", "N", W("a quarter of the containers' total"),
     "container-socket connections one user's containers may hold together (default: a quarter "
     "of the total; root's containers are bounded by the total only)",
     "Container-socket connections one owner's containers may hold together (the default is a "
     "quarter of {max-client-connections}). Containers owned by root or the daemon's user are "
     "bounded by the total only.",
     UINT(user_max_connections, 1, 1000000, "a whole number from 1 to 1000000")},
    {"user-max-priority", "N", D("0"),
     "the highest priority (0-9) a user who is not root or an operator may give its containers "
     "(default 0); above it, and for exclusive GPUs, a tenant needs an allowance that root gives "
     "with convgpu tenant set (docs/SECURITY.md)",
     "The highest priority a user who is not root, the daemon's user or an operator may give "
     "its containers. Above it, and for exclusive GPUs, its tenant needs an allowance that root "
     "gives with `convgpu tenant set` (a maximum priority, exclusive GPUs; docs/SECURITY.md).",
     UINT(user_max_priority, 0, 9, "a whole number from 0 to 9")},
    {"api-idle-timeout", "S", D("30"),
     "seconds a control-socket connection may stay silent before it is closed (default 30; "
     "1-3600; event followers waiting for events are exempt)",
     "Seconds a control-socket connection may stay silent before the daemon closes it. Event "
     "followers waiting for events are exempt; metrics over TCP close after 10 s.",
     UINT(api_idle_timeout, 1, 3600, "whole seconds from 1 to 3600")},
    {"watchdog-interval", "S", D("5"),
     "seconds between NVML cross-checks of every process's GPU memory (default 5; 0 = off)",
     "Seconds between NVML cross-checks of every process's GPU memory; `0` turns the watchdog "
     "off.",
     CUSTOM(p_watchdog_interval, "seconds: `0` (off) or `0.1` to `86400`")},
    {"watchdog-tolerance", "SIZE", D("64MiB"),
     "how far a container may exceed its limit by NVML before it is flagged (default 64MiB)",
     "How far a container may exceed its limit by NVML's account before it is flagged.",
     SIZE(watchdog_tolerance, 0)},
    {"watchdog-kill", "yes|no", D("no"), "kill what the watchdog flags (default no: report only)",
     "Kill what the watchdog flags (`no`: report it in the log, the events and the metrics).",
     BOOL(watchdog_kill)},
    {"swap", "yes|no", D("no"),
     "make containers' allocations swappable, and let the scheduler move waiting or "
     "lower-priority containers to host memory (default no; docs/SWAP.md)",
     "Make the containers' allocations swappable: their memory can be moved to the host and "
     "back at the same addresses, by the operator's order or by the scheduler, which moves "
     "waiting and lower-priority containers out to let a request run (docs/SWAP.md).",
     BOOL(swap)},
    {"swap-limit", "SIZE", W("half the host's memory when swap is on"),
     "host memory swapped-out containers may hold together (default: half the host's memory "
     "when --swap yes)",
     "Host memory the swapped-out containers may hold together. The scheduler's and operators' "
     "moves never exceed it; tenants' own holds come from {swap-hold-share} on top of it.",
     CUSTOM(p_swap_limit, "a size")},
    /* Half the swap budget for tenants' own holds, the other half always the scheduler's and
     * the operators' (docs/SECURITY.md, "Held swaps and profile records"). */
    {"swap-hold-share", "N%", D("50%"),
     "the share of --swap-limit that users who are not operators may hold their own containers "
     "out with (convgpu swap), all together, each its tenant's weighted part (default 50%; 0 = "
     "only operators hold); the rest stays for preemption",
     "The share of {swap-limit} that users who are not operators may hold their own containers "
     "out with (`convgpu swap`), all together, each its tenant's weighted part; `0`: only "
     "operators hold. Tenants' holds never count against preemption, so swap may use up to "
     "this much host memory beyond the swap limit.",
     CUSTOM(p_swap_hold_share, "a whole percentage from `0` to `100`")},
    {"pause-fallback", "none|swap", D("none"),
     "what convgpu pause does where the driver has no checkpoint API (R550 and newer have it): "
     "none refuses (501), swap swaps the container out instead (needs --swap yes; "
     "docs/PAUSE.md)",
     "What `convgpu pause` does where the driver has no process checkpoint API (drivers R550 "
     "and newer have it): `none` refuses with 501, `swap` swaps the container out instead "
     "(needs {swap} `yes`; docs/PAUSE.md).",
     CUSTOM(p_pause_fallback, "`none` or `swap`")},
    {"auto-pause", "yes|no", D("no"),
     "whether the scheduler may checkpoint a victim whole (allocations and contexts) where "
     "swapping it frees too little; only with a driver that has the checkpoint API "
     "(docs/SCHEDULING.md, swap or checkpoint for a victim)",
     "Whether the scheduler may checkpoint a victim whole (its allocations and its processes' "
     "contexts) where swapping it would free too little; the victim comes back by itself once "
     "its memory is free and safe. Only with a driver that has the checkpoint API "
     "(docs/SCHEDULING.md, \"Swap or checkpoint for a victim\").",
     CUSTOM(p_auto_pause, "`yes` or `no`")},
    {"checkpoint-helper", "PATH",
     W("`convgpu-checkpoint` beside convgpud, else in `LIBEXECDIR/convgpu`"),
     "the program that drives the checkpoint API for pause, resume and move (default: "
     "convgpu-checkpoint beside convgpud, else in LIBEXECDIR/convgpu)",
     "The program that drives the driver's checkpoint API for pause, resume and move. convgpud "
     "never loads the driver itself.",
     CUSTOM(p_checkpoint_helper, "an absolute path")},
    {"follow-stop", "PREFIX|off", D("off"),
     "pause a container whose id begins with PREFIX while all its processes are stopped "
     "(SIGSTOP, as Slurm's scontrol suspend does) and resume it when they run again; slurm- "
     "follows Slurm job steps (default off; docs/SLURM.md, Suspend and resume)",
     "Pause a container whose id begins with PREFIX while all its processes are stopped "
     "(SIGSTOP, as Slurm's `scontrol suspend` does) and resume it when they run again "
     "(SIGCONT), as `convgpu pause` and `convgpu resume` would; `slurm-` follows Slurm job "
     "steps (docs/SLURM.md, \"Suspend and resume\"). The checkpoint helper runs only the "
     "driver's restore thread of a stopped process (ptrace), so convgpud must run as root or "
     "with CAP_SYS_PTRACE.",
     CUSTOM(p_follow_stop, "a container id prefix such as `slurm-` (letters, digits, `-`, `_`, "
                           "`.`), or `off`")},
    {"aging", "SECONDS", W("`60`"),
     "waiting this long lifts a container one priority class (default 60; docs/SCHEDULING.md, "
     "Priorities)",
     "Waiting this long lifts a container one priority class, so low priorities never starve; "
     "also how long a container back from a swap is not moved out again for a running "
     "victim's sake (docs/SCHEDULING.md, \"Priorities\").",
     CUSTOM(p_aging, "seconds from `1` to `86400`")},
    {"gang-wait-max", "SECONDS", D("0"),
     "how long a container on several GPUs may wait queued for all of them; past it its "
     "waiting allocations are refused, it reserves nothing and is never admitted (default 0: "
     "no bound; docs/SCHEDULING.md, Several GPUs that wait)",
     "How long a container on several GPUs may wait queued for all of them to have its limit "
     "free; `0` sets no bound. Past it the daemon gives the container up: its waiting "
     "allocations are refused (its programs see out-of-memory), later ones are refused at once, "
     "it reserves nothing and is not admitted when its GPUs have room; it shows as `expired` "
     "until it is removed, and the log says why (docs/SCHEDULING.md, \"Several GPUs that "
     "wait\").",
     UINT(gang_wait_max, 0, 604800, "whole seconds from 0 (no bound) to 604800")},
    {"auto-move", "N", D("0"),
     "moves a minute the scheduler may make to make room: a container waits for memory its "
     "GPU does not have, and moving one running container off that GPU to another of the "
     "same model makes room (default 0: never; docs/SCHEDULING.md, Moving a container to make "
     "room)",
     "At most N moves a minute the scheduler may start by itself, `0` (the default) none. When "
     "a container waits for memory its GPU does not have free (its allocations are asked on "
     "its own GPU), and moving one running container off that GPU to another of the same "
     "model would make room, that container is moved as `convgpu move` moves it (reserved on the target "
     "first, checkpointed, restored there; the fewest bytes moved), one move at a time, and "
     "the event `auto-move` names it. Needs the driver's checkpoint API (docs/SCHEDULING.md, "
     "\"Moving a container to make room\").",
     UINT(auto_move, 0, 60, "a number from 0 (never) to 60")},
    {"profile-limits", "MARGIN|off", W("`off`: a limit is required"),
     "a container created without a GPU-memory limit gets its profile's peak (learnt from past "
     "runs of the same image or command by the same user) plus MARGIN, 1%-100% (default off: a "
     "limit is required; convgpu profile)",
     "A container created without a GPU-memory limit gets its profile's peak (learnt from past "
     "runs of the same image or command by the same user; `convgpu profile`) plus MARGIN, "
     "rounded up to whole MiB and clamped to the GPU; with no profile yet a limit is required "
     "as before. `0%`, `abc`, `300%` stop the daemon with the reason.",
     CUSTOM(p_profile_limits, "a margin from `1%` to `" STR(PROFILE_MARGIN_MAX_PCT) "%`, or "
                              "`off`")},
    {"profile-max-keys", "N", D("256"),
     "profiles (keys) one tenant keeps; the oldest goes first (default 256)",
     "Profiles (keys) one tenant keeps in `state.db`; recording a run of a new key past it "
     "drops the tenant's least recently run other profiles (docs/OPERATIONS.md, \"Profiles\").",
     UINT(profile_max_keys, 1, 100000, "a number from 1 to 100000")},
    {"profile-max-bytes", "SIZE", D("1MiB"),
     "what one tenant's profiles may take in state.db, keys and runs (default 1MiB; at least "
     "16KiB); the oldest first",
     "What one tenant's profiles, keys and runs, may take in `state.db` (64 bytes a row plus "
     "the tenant's and key's text, the profile's row and each run's); past it, the least "
     "recently run go first.",
     SIZE(profile_max_bytes, PROFILE_MAX_BYTES_MIN)},
    {"log-level", "LEVEL", D("info"), "error, warn, info (default), debug",
     "How much the daemon logs to stderr: at `info`, one line per decision (admit, grant, "
     "suspend, resume with the wait, reject, release, process connect and exit, removal).",
     CUSTOM(p_log_level, "`error`, `warn`, `info`, `debug`")},
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

/* ---- the pages: convgpud.8, convgpud.conf.5 and OPERATIONS.md from the same rows ----------- */

enum page { PAGE_MAN8, PAGE_CONF5, PAGE_MARKDOWN, PAGE_PLAIN };

struct text {
    char s[8192]; /* the longest row renders to under 2 KiB */
    size_t n;
};

static void put(struct text *t, const char *s)
{
    size_t k = strlen(s);
    if (t->n + k >= sizeof t->s)
        abort(); /* a row longer than the buffer: caught by every test of the pages */
    memcpy(t->s + t->n, s, k + 1);
    t->n += k;
}

/* A literal in roff: dashes as \-, backslashes as \e. */
static void put_roff_literal(struct text *t, const char *s, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        char c[2] = {s[i], '\0'};
        put(t, s[i] == '-' ? "\\-" : s[i] == '\\' ? "\\e" : c);
    }
}

/* The markup of the table's words (see struct setting) as the page writes it. */
static void render(struct text *t, enum page page, const char *m)
{
    bool roff = page == PAGE_MAN8 || page == PAGE_CONF5, code = false;
    while (*m) {
        if (*m == '`') {
            code = !code;
            /* \% keeps roff from hyphenating a literal */
            put(t, roff ? (code ? "\\fB\\%" : "\\fR") : page == PAGE_MARKDOWN ? "`" : "");
            m++;
        } else if (*m == '{' && strchr(m, '}')) {
            size_t len = (size_t)(strchr(m, '}') - m - 1);
            if (roff) {
                put(t, "\\fB\\%");
                if (page == PAGE_MAN8)
                    put(t, "\\-\\-");
                put_roff_literal(t, m + 1, len);
                put(t, "\\fR");
            } else {
                char name[64];
                snprintf(name, sizeof name, "%.*s", (int)len, m + 1);
                put(t, page == PAGE_MARKDOWN ? "`" : "");
                put(t, name);
                put(t, page == PAGE_MARKDOWN ? "`" : "");
            }
            m += len + 2;
        } else if (roff && strncmp(m, "\u00d7", strlen("\u00d7")) == 0) {
            put(t, "\\(mu");
            m += strlen("\u00d7");
        } else if (roff && (*m == '\\' || (*m == '-' && code))) {
            put_roff_literal(t, m, 1);
            m++;
        } else if (page == PAGE_MARKDOWN && *m == '|') {
            put(t, "\\|");
            m++;
        } else {
            char c[2] = {*m++, '\0'};
            put(t, c);
        }
    }
}

/* The default as the pages say it: the value the parser applies, or the row's words. */
static void render_default(struct text *t, enum page page, const struct setting *s)
{
    if (!s->def) {
        render(t, page, s->default_words);
        return;
    }
    char code[64];
    snprintf(code, sizeof code, "`%s`", s->def);
    render(t, page, code);
}

/* What a setting takes as the pages say it: from the row for the common kinds. */
static void render_values(struct text *t, enum page page, const struct setting *s)
{
    char words[160];
    switch (s->kind) {
    case K_UINT:
        snprintf(words, sizeof words, "`%llu` to `%llu`", s->min, s->max);
        break;
    case K_SIZE:
        if (s->min)
            snprintf(words, sizeof words, "a size of at least `%lluKiB`", s->min >> 10);
        else
            snprintf(words, sizeof words, "a size such as `64MiB` or `2GiB`");
        break;
    case K_BOOL:
        snprintf(words, sizeof words, "`yes` or `no`");
        break;
    case K_CUSTOM:
        snprintf(words, sizeof words, "%s", s->values);
        break;
    }
    render(t, page, words);
}

/* Roff text filled to about 90 columns; a line that would begin with a control character gets
 * the zero-width \& in front. */
static void print_roff(FILE *f, const char *s)
{
    while (*s) {
        const char *end = s + strlen(s), *brk = end;
        if (end - s > 90) {
            brk = s + 90;
            while (brk > s && *brk != ' ')
                brk--;
            if (brk == s)
                brk = strchr(s + 90, ' ') ? strchr(s + 90, ' ') : end;
        }
        fprintf(f, "%s%.*s\n", *s == '.' || *s == '\'' ? "\\&" : "", (int)(brk - s), s);
        s = *brk ? brk + 1 : brk;
    }
}

static void doc_roff(FILE *f, enum page page, const struct setting *s)
{
    struct text t = {.n = 0};
    fputs(".TP\n.BI ", f);
    if (page == PAGE_MAN8)
        put(&t, "\\-\\-");
    put_roff_literal(&t, s->name, strlen(s->name));
    fprintf(f, "%s \"%s%s\"\n", t.s, page == PAGE_CONF5 ? " = " : " ", s->arg);
    t.n = 0;
    t.s[0] = '\0';
    render(&t, page, s->doc);
    print_roff(f, t.s);
    t.n = 0;
    put(&t, "Default: ");
    render_default(&t, page, s);
    put(&t, ". Values: ");
    render_values(&t, page, s);
    put(&t, ".");
    fputs(".br\n", f);
    print_roff(f, t.s);
}

static void doc_markdown(FILE *f, const struct setting *s)
{
    struct text t = {.n = 0};
    put(&t, "| `");
    put(&t, s->name);
    put(&t, "` | ");
    render_default(&t, PAGE_MARKDOWN, s);
    put(&t, " | ");
    render_values(&t, PAGE_MARKDOWN, s);
    put(&t, " | ");
    render(&t, PAGE_MARKDOWN, s->doc);
    put(&t, " |");
    fprintf(f, "%s\n", t.s);
}

static void doc_tsv(FILE *f, const struct setting *s)
{
    struct text t = {.n = 0};
    render_default(&t, PAGE_PLAIN, s);
    put(&t, "\t");
    render_values(&t, PAGE_PLAIN, s);
    fprintf(f, "%s\t%s\t%s\n", s->name, s->arg, t.s);
}

/* The configuration file's example (packaging/convgpud.conf.example, installed commented out
 * as /etc/convgpu/convgpud.conf): every key with its help as a comment, then the key commented
 * out with its default, or its argument's name where the default is not a value. */
static void doc_conf(FILE *f, const struct setting *s)
{
    int col = fprintf(f, "# %s:", s->name);
    for (const char *p = s->help; *p;) {
        size_t w = strcspn(p, " ");
        if (col + 1 + (int)w > 96) {
            fputs("\n#", f);
            col = 1;
        }
        col += fprintf(f, " %.*s", (int)w, p);
        p += w;
        while (*p == ' ')
            p++;
    }
    fprintf(f, "\n#%s = %s\n\n", s->name, s->def ? s->def : s->arg);
}

/* The synopsis: every setting as [--NAME ARG] between the program's own options, filled to 96
 * columns under the program's name, in the fenced block docs.blocks checks against --help. */
static void doc_synopsis(FILE *f, const char *before, const char *after)
{
    fputs("<!-- doc-test: options convgpud -->\n```\nconvgpud", f);
    int col = (int)strlen("convgpud");
    char item[160];
    for (size_t i = 0; i <= NSETTINGS + 1; i++) {
        if (i == 0)
            snprintf(item, sizeof item, "%s", before);
        else if (i <= NSETTINGS)
            snprintf(item, sizeof item, "[--%s %s]", settings[i - 1].name, settings[i - 1].arg);
        else
            snprintf(item, sizeof item, "%s", after);
        /* before/after may hold several items: fill word groups "[...]" one by one */
        for (const char *p = item; *p;) {
            const char *close = strchr(p, ']');
            size_t len = close ? (size_t)(close - p + 1) : strlen(p);
            if (col + 1 + (int)len > 96) {
                fputs("\n        ", f);
                col = 8;
            }
            fprintf(f, " %.*s", (int)len, p);
            col += 1 + (int)len;
            p += len;
            while (*p == ' ')
                p++;
        }
    }
    fputs("\n```\n", f);
}

int settings_doc(FILE *f, const char *format, const char *before, const char *after)
{
    if (strcmp(format, "synopsis") == 0) {
        doc_synopsis(f, before, after);
        return 0;
    }
    if (strcmp(format, "markdown") == 0)
        fputs("| setting | default | values | meaning |\n|---|---|---|---|\n", f);
    else if (strcmp(format, "man8") != 0 && strcmp(format, "conf5") != 0 &&
             strcmp(format, "conf") != 0 && strcmp(format, "tsv") != 0)
        return -1;
    for (size_t i = 0; i < NSETTINGS; i++) {
        if (strcmp(format, "man8") == 0)
            doc_roff(f, PAGE_MAN8, &settings[i]);
        else if (strcmp(format, "conf5") == 0)
            doc_roff(f, PAGE_CONF5, &settings[i]);
        else if (strcmp(format, "markdown") == 0)
            doc_markdown(f, &settings[i]);
        else if (strcmp(format, "conf") == 0)
            doc_conf(f, &settings[i]);
        else
            doc_tsv(f, &settings[i]);
    }
    return 0;
}

int settings_doc_file(FILE *in, FILE *out, const char *name, const char *before,
                      const char *after)
{
    static const char begin[] = "generated: convgpud --settings-doc ";
    char *line = NULL;
    size_t cap = 0;
    unsigned lineno = 0, regions = 0, inside = 0;
    int rc = 0;
    while (getline(&line, &cap, in) >= 0) {
        lineno++;
        const char *b = strstr(line, begin);
        if (inside) {
            if (b) {
                fprintf(stderr, "convgpud: %s:%u: a region begins before line %u's ends\n",
                        name, lineno, inside);
                rc = -1;
                break;
            }
            if (strstr(line, "end generated")) {
                fputs(line, out);
                inside = 0;
            }
            continue;
        }
        fputs(line, out);
        if (!b)
            continue;
        char format[16];
        size_t len = strspn(b + strlen(begin), "abcdefghijklmnopqrstuvwxyz0123456789");
        snprintf(format, sizeof format, "%.*s", (int)len, b + strlen(begin));
        if (len >= sizeof format || strcmp(format, "tsv") == 0 ||
            settings_doc(out, format, before, after) != 0) {
            fprintf(stderr, "convgpud: %s:%u: no such format '%s'\n", name, lineno, format);
            rc = -1;
            break;
        }
        inside = lineno;
        regions++;
    }
    if (rc == 0 && inside) {
        fprintf(stderr, "convgpud: %s:%u: the region has no end (a line with 'end generated')\n",
                name, inside);
        rc = -1;
    } else if (rc == 0 && !regions) {
        fprintf(stderr, "convgpud: %s: no region (a line with '%s')\n", name, begin);
        rc = -1;
    }
    free(line);
    return rc;
}
