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
#include "settings.h"
#include "metrics.h"
#include "watchdog.h"
#include "gates.h"
#include "daemon.h"
#include "fdbudget.h"
#include "fdspare.h"
#include <sys/resource.h>
#include "gang.h"
#include "record.h"
#include "interference.h"
#include "swap.h"
#include "automove.h"
#include "follow_stop.h"
#include "adaptive.h"
#include "oversub.h"
#include "log.h"
#include "size.h"
#include "store.h"
#include "topology.h"
#include "topology_file.h"

static void usage(FILE *f)
{
    fprintf(f, "Usage: convgpud [OPTIONS]\n"
               "\n"
               "The convgpu node daemon: the authority on every byte of GPU memory on this node.\n"
               "Containers get a GPU-memory limit; a container that asks for more than is free\n"
               "right now is suspended and resumed by the scheduling policy when memory returns.\n"
               "\n"
               "Options (each may also be set as `name = value` in the configuration file):\n"
               "  --config FILE         configuration file (default " CONFIG_DEFAULT_PATH " if it\n"
               "                        exists); flags given here override it\n");
    settings_usage(f);
    fprintf(f, "  --foreground          do not detach (use under systemd, docker, tests)\n"
               "  --check-config        read the configuration file and the options, say what is\n"
               "                        wrong (exit 2) or that they are valid (exit 0), and exit\n"
               "  --version             print the version and exit\n"
               "  --routes              print the control API's routes and who may call each\n"
               "  --settings-doc FORMAT|FILE\n"
               "                        print the settings' documentation from their table\n"
               "                        (man8, conf5, conf, markdown, synopsis, tsv), or FILE\n"
               "                        with its generated regions rewritten (make docs)\n"
               "  -h, --help            this help\n"
               "\n"
               "Control API: curl --unix-socket DIR/control.sock http://convgpu/v1/containers\n");
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
    int rc = config_parse(text, n, settings_apply, &scratch, err, sizeof err);
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

/* The program's own options around the settings in OPERATIONS.md's synopsis. */
#define SYNOPSIS_BEFORE "[--config FILE]"
#define SYNOPSIS_AFTER                                                                          \
    "[--foreground] [--check-config] [--version] [--routes] [--settings-doc FORMAT|FILE]"

/* --settings-doc: a format of the settings' documentation, or a file with generated regions
 * rewritten to stdout (settings.h). 1 (exit 0) or 2. */
static int settings_doc_command(const char *arg)
{
    if (settings_doc(stdout, arg, SYNOPSIS_BEFORE, SYNOPSIS_AFTER) == 0)
        return 1;
    if (!strchr(arg, '/') && !strchr(arg, '.')) {
        fprintf(stderr, "convgpud: --settings-doc takes man8, conf5, conf, markdown, synopsis, "
                        "tsv or a file, not '%s'\n", arg);
        return 2;
    }
    FILE *in = fopen(arg, "re");
    if (!in) {
        fprintf(stderr, "convgpud: cannot read %s: %s\n", arg, strerror(errno));
        return 2;
    }
    int rc = settings_doc_file(in, stdout, arg, SYNOPSIS_BEFORE, SYNOPSIS_AFTER);
    fclose(in);
    return rc == 0 && fflush(stdout) == 0 ? 1 : 2;
}

/* Returns 0 to run, 1 to exit 0 (help, version, a valid --check-config), 2 on bad usage or a
 * bad setting. */
static int parse_args(int argc, char **argv, struct daemon_options *o)
{
    enum {
        O_CONFIG = 1000,
        O_FOREGROUND,
        O_CHECK_CONFIG,
        O_VERSION,
        O_ROUTES,
        O_SETTINGS_DOC,
        O_SETTING
    };
    /* Every setting of the table is a flag taking a value; a few more are the program's own. */
    static struct option opts[96];
    size_t nopts = 0;
    if (settings_count() > 96 - 8) /* the table outgrew this array: every test says so */
        abort();
    for (size_t i = 0; i < settings_count(); i++)
        opts[nopts++] = (struct option){settings_name(i), required_argument, NULL, O_SETTING};
    opts[nopts++] = (struct option){"config", required_argument, NULL, O_CONFIG};
    opts[nopts++] = (struct option){"foreground", no_argument, NULL, O_FOREGROUND};
    opts[nopts++] = (struct option){"check-config", no_argument, NULL, O_CHECK_CONFIG};
    opts[nopts++] = (struct option){"version", no_argument, NULL, O_VERSION};
    opts[nopts++] = (struct option){"routes", no_argument, NULL, O_ROUTES};
    opts[nopts++] = (struct option){"settings-doc", required_argument, NULL, O_SETTINGS_DOC};
    opts[nopts++] = (struct option){"help", no_argument, NULL, 'h'};
    opts[nopts] = (struct option){NULL, 0, NULL, 0};
    settings_defaults(o);

    /* First pass: help, version and the configuration file, which flags then override. */
    const char *config = NULL;
    bool check_only = false;
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
        if (c == O_SETTINGS_DOC)
            return settings_doc_command(optarg);
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
            if (settings_apply(o, opts[idx].name, optarg, err, sizeof err) != 0) {
                fprintf(stderr, "convgpud: --%s\n", err);
                return 2;
            }
            break;
        case O_FOREGROUND:
            o->foreground = true;
            break;
        case O_CHECK_CONFIG:
            check_only = true;
            break;
        case O_CONFIG:
        case O_SETTINGS_DOC:
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
    if (check_only) {
        /* Everything the daemon checks before it touches the node: the file, the flags over it,
         * and how they fit together; the runtime directory and the GPUs are checked at start. */
        const char *path = config ? config : CONFIG_DEFAULT_PATH;
        if (access(path, F_OK) == 0)
            printf("convgpud: %s and the options are valid\n", path);
        else
            printf("convgpud: the options are valid (no %s)\n", path);
        return 1;
    }
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
                     .aging_step = d.opt.aging_ns,
                     .slowdown = interference_slowdown, .slowdown_ctx = &d,
                     .auto_pause = pause_auto_available(&d)};
    metrics_init(&d); /* counts from the first decision on: restored containers' too */
    d.swap_ops = &pause_for_decide; /* before the first decision: its orders reach pause.c,
                                     * which hands a swap's on to swap.c */
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
    interference_reload(&d); /* the interference placement's matrix (interference.h) */
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
    if (record_check_downgrade(d.rd.records_fd, err, sizeof err) != 0) {
        log_error("%s", err);
        return 1;
    }
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
        int tf = decide_tick(&d), tstop = follow_stop_tick(&d), tg = gang_tick(&d);
        int tmove = automove_tick(&d);
        if (tmove >= 0 && (t < 0 || tmove < t))
            t = tmove;
        if (tg >= 0 && (t < 0 || tg < t))
            t = tg;
        if (tstop >= 0 && (t < 0 || tstop < t))
            t = tstop;
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
    interference_free(&d);
    cg_core_free(d.core);
    loop_free(d.loop);
    rundir_close(&d.rd);
    return 0;
}
