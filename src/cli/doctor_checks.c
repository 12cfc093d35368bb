/* doctor_checks.c — the rows of `convgpu doctor` (doctor.h): one function per piece convgpu's
 * install touches. Each reads files under ctx->root with plain reads (nothing is written, no
 * service is restarted), and each finding names the command that fixes it. */
#include <dirent.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "daemon_hint.h"
#include "doctor.h"
#include "../daemon/fdbudget.h" /* the daemon's descriptor planner: pure, no daemon state */

__attribute__((format(printf, 3, 4))) static void say(struct doctor_finding *f,
                                                      enum doctor_status st, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(f->what, sizeof f->what, fmt, ap);
    va_end(ap);
    f->status = st;
}

__attribute__((format(printf, 2, 3))) static void fix(struct doctor_finding *f, const char *fmt,
                                                      ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(f->fix, sizeof f->fix, fmt, ap);
    va_end(ap);
}

const char *doctor_path(const struct doctor_ctx *ctx, const char *path, char *out, size_t len)
{
    snprintf(out, len, "%s%s", ctx->root, path);
    return out;
}

static bool exists(const struct doctor_ctx *ctx, const char *path)
{
    char p[PATH_MAX];
    return access(doctor_path(ctx, path, p, sizeof p), F_OK) == 0;
}

/* The file's text (at most 1 MiB), malloc'd; NULL when unreadable. */
static char *slurp(const struct doctor_ctx *ctx, const char *path)
{
    char p[PATH_MAX];
    FILE *fp = fopen(doctor_path(ctx, path, p, sizeof p), "re");
    if (!fp)
        return NULL;
    char *buf = malloc((1u << 20) + 1);
    size_t n = buf ? fread(buf, 1, 1u << 20, fp) : 0;
    fclose(fp);
    if (buf)
        buf[n] = '\0';
    return buf;
}

static bool file_has(const struct doctor_ctx *ctx, const char *path, const char *needle)
{
    char *t = slurp(ctx, path);
    bool yes = t && strstr(t, needle);
    free(t);
    return yes;
}

static void check_driver(const struct doctor_ctx *ctx, struct doctor_finding *f)
{
    const char *mode = json_string_value(json_object_get(ctx->version, "mode"));
    bool emulated = mode && strcmp(mode, "emulated") == 0;
    char *ver = slurp(ctx, "/proc/driver/nvidia/version");
    static const char *const libs[] = {"/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1",
                                       "/usr/lib/aarch64-linux-gnu/libnvidia-ml.so.1",
                                       "/usr/lib64/libnvidia-ml.so.1", "/usr/lib/libnvidia-ml.so.1"};
    char nvml[PATH_MAX] = "";
    for (size_t i = 0; i < sizeof libs / sizeof libs[0] && !nvml[0]; i++) {
        char p[PATH_MAX], target[PATH_MAX];
        doctor_path(ctx, libs[i], p, sizeof p);
        ssize_t n = readlink(p, target, sizeof target - 1);
        if (n > 0) {
            target[n] = '\0';
            snprintf(nvml, sizeof nvml, "%s", target); /* libnvidia-ml.so.VERSION */
        } else if (access(p, F_OK) == 0) {
            snprintf(nvml, sizeof nvml, "%s", libs[i]);
        }
    }
    if (ver && nvml[0]) {
        char *kmod = strstr(ver, "Kernel Module");
        char v[64] = "?";
        if (kmod)
            sscanf(kmod + 13, " %63s", v);
        say(f, DOCTOR_OK, "NVIDIA driver %s, NVML %s", v, nvml);
    } else if (emulated) {
        say(f, DOCTOR_OK, "no NVIDIA driver (%s): the daemon emulates its GPUs",
            ver ? "NVML library missing" : "no kernel module");
    } else {
        say(f, DOCTOR_BROKEN, "%s: convgpud needs the driver's kernel module and NVML",
            !ver ? "no NVIDIA kernel module (/proc/driver/nvidia/version)"
                 : "the kernel module is loaded but libnvidia-ml.so.1 is missing");
        fix(f, "install the NVIDIA driver (apt install nvidia-driver, then reboot), or run "
               "convgpud --emulate SIZE on a machine without a GPU");
    }
    free(ver);
}

static void check_daemon(const struct doctor_ctx *ctx, struct doctor_finding *f)
{
    if (!ctx->version) {
        char hint[PATH_MAX + 160];
        say(f, DOCTOR_BROKEN, "%s", ctx->daemon_error);
        fix(f, "%s", cgc_daemon_start_hint(ctx->root, cli_runtime_dir(), hint, sizeof hint));
        return;
    }
    const char *v = json_string_value(json_object_get(ctx->version, "version"));
    if (!v || strcmp(v, CONVGPU_VERSION) != 0) {
        say(f, DOCTOR_BROKEN, "convgpud %s answers, but this convgpu is %s: one of them is "
                              "left from another install",
            v ? v : "(no version)", CONVGPU_VERSION);
        fix(f, "install one version of the packages (apt install convgpu libconvgpu), then "
               "systemctl restart convgpud");
        return;
    }
    say(f, DOCTOR_OK, "convgpud %s (%s) answers on %s", v,
        json_string_value(json_object_get(ctx->version, "mode")), cli_runtime_dir());
}

/* The version a libconvgpu.so was built at: its marker (src/interpose/version.c), read from the
 * file; "" when the file has none (older than the marker) or cannot be read. */
static void interposer_version(const char *path, char *out, size_t len)
{
    static const char marker[] = "convgpu-interposer-version=";
    out[0] = '\0';
    FILE *fp = fopen(path, "re");
    if (!fp)
        return;
    static char buf[8u << 20];
    size_t n = fread(buf, 1, sizeof buf - 1, fp);
    fclose(fp);
    buf[n] = '\0';
    char *hit = memmem(buf, n, marker, sizeof marker - 1);
    if (hit)
        sscanf(hit + sizeof marker - 1, "%31[^ ]", out);
    if (len < 32)
        out[0] = '\0';
}

/* The first line convgpu-runtime --version prints ("convgpu-runtime version X"), with /bin/true
 * as the runtime behind it so that no runc is needed. */
static void shim_version(const char *path, char *out, size_t len)
{
    out[0] = '\0';
    char cmd[PATH_MAX + 64];
    snprintf(cmd, sizeof cmd, "'%s' --runtime /bin/true --version 2>/dev/null", path);
    FILE *p = popen(cmd, "r");
    char line[256] = "";
    if (!p)
        return;
    if (fgets(line, sizeof line, p))
        sscanf(line, "convgpu-runtime version %63s", out);
    pclose(p);
    (void)len;
}

static void check_versions(const struct doctor_ctx *ctx, struct doctor_finding *f)
{
    const char *want = json_string_value(json_object_get(ctx->version, "version"));
    if (!want)
        want = CONVGPU_VERSION;
    char found[1024] = "";
    size_t used = 0;
    bool bad = false;
    /* The interposer the daemon hands out, and the packaged one (what the shim mounts). */
    const char *given = json_string_value(
        json_object_get(json_object_get(ctx->version, "node_env"), "LD_PRELOAD"));
    char packaged[PATH_MAX];
    doctor_path(ctx, "/usr/lib/convgpu/libconvgpu.so", packaged, sizeof packaged);
    const char *libs[] = {given, access(packaged, F_OK) == 0 ? packaged : NULL};
    for (size_t i = 0; i < 2; i++) {
        if (!libs[i] || (i == 1 && given && strcmp(given, packaged) == 0))
            continue;
        char v[64];
        interposer_version(libs[i], v, sizeof v);
        bad = bad || strcmp(v, want) != 0;
        used += (size_t)snprintf(found + used, sizeof found - used, "%sinterposer %.300s: %s",
                                 used ? "; " : "", libs[i], v[0] ? v : "no version marker");
        if (used >= sizeof found)
            break;
    }
    /* The shim: the packaged one, else the one beside this convgpu. */
    char shim[PATH_MAX], self[PATH_MAX];
    doctor_path(ctx, "/usr/bin/convgpu-runtime", shim, sizeof shim);
    if (access(shim, X_OK) != 0) {
        ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
        self[n > 0 ? n : 0] = '\0';
        char *slash = strrchr(self, '/');
        if (slash)
            snprintf(shim, sizeof shim, "%.*s/convgpu-runtime", (int)(slash - self), self);
    }
    if (access(shim, X_OK) == 0 && used < sizeof found) {
        char v[64];
        shim_version(shim, v, sizeof v);
        bad = bad || strcmp(v, want) != 0;
        snprintf(found + used, sizeof found - used, "%sshim %.300s: %s", used ? "; " : "", shim,
                 v[0] ? v : "no version");
    }
    if (!found[0]) {
        say(f, DOCTOR_ABSENT, "no interposer or shim found to compare");
        return;
    }
    if (bad) {
        say(f, DOCTOR_BROKEN, "not every piece is convgpud's %s (%s): containers started now "
                              "may speak another protocol",
            want, found);
        fix(f, "install one version of every package (apt install convgpu=%s libconvgpu=%s), "
               "then systemctl restart convgpud",
            want, want);
        return;
    }
    say(f, DOCTOR_OK, "%s", found);
}

static void check_context(const struct doctor_ctx *ctx, struct doctor_finding *f)
{
    json_t *devs = json_is_array(ctx->devices) ? ctx->devices
                                               : json_object_get(ctx->devices, "devices");
    if (!ctx->devices || !json_is_array(devs) || json_array_size(devs) == 0) {
        say(f, ctx->version ? DOCTOR_BROKEN : DOCTOR_ABSENT, "%s",
            ctx->version ? "the daemon lists no GPU" : "the daemon is not reached");
        if (ctx->version)
            fix(f, "journalctl -u convgpud (why it found no GPU)");
        return;
    }
    json_t *d = json_array_get(devs, 0);
    json_int_t charge = json_integer_value(json_object_get(d, "context_charge"));
    if (charge <= 0) {
        say(f, DOCTOR_WARN, "GPU 0's context charge is not measured yet: every process's "
                            "context is then counted at the default");
        fix(f, "run one CUDA process under convgpu (convgpu run --gpu-memory 256MiB -- CMD)");
        return;
    }
    say(f, DOCTOR_OK, "context charge %lld MiB per process (GPU 0)",
        (long long)(charge >> 20));
}

static void check_rundir(const struct doctor_ctx *ctx, struct doctor_finding *f)
{
    (void)ctx;
    struct stat st;
    const char *dir = cli_runtime_dir();
    if (stat(dir, &st) != 0) {
        say(f, DOCTOR_BROKEN, "the runtime directory %s does not exist", dir);
        fix(f, "systemd-tmpfiles --create /usr/lib/tmpfiles.d/convgpu.conf (or start convgpud)");
        return;
    }
    if (st.st_mode & (S_IWGRP | S_IWOTH)) {
        say(f, DOCTOR_BROKEN, "the runtime directory %s is mode %04o: others can replace the "
                              "control socket",
            dir, (unsigned)(st.st_mode & 07777));
        fix(f, "chmod 0755 %s", dir);
        return;
    }
    say(f, DOCTOR_OK, "%s: mode %04o", dir, (unsigned)(st.st_mode & 07777));
}

/* A bound from the daemon's configuration file ("key = value" lines), 0 when not set there. */
static unsigned conf_bound(const struct doctor_ctx *ctx, const char *key)
{
    char *text = slurp(ctx, "/etc/convgpu/convgpud.conf");
    unsigned v = 0;
    size_t klen = strlen(key);
    for (char *line = text; line && *line;) {
        char *end = strchr(line, '\n');
        while (*line == ' ' || *line == '\t')
            line++;
        if (strncmp(line, key, klen) == 0 && (line[klen] == ' ' || line[klen] == '=')) {
            const char *eq = strchr(line, '=');
            if (eq && (!end || eq < end))
                v = (unsigned)strtoul(eq + 1, NULL, 10);
        }
        line = end ? end + 1 : NULL;
    }
    free(text);
    return v;
}

static void check_fd_limit(const struct doctor_ctx *ctx, struct doctor_finding *f)
{
    /* The daemon's own planner (src/daemon/fdbudget.c), given its descriptor limit and its
     * connection bounds (convgpud.conf's, else the defaults): what it warns of at start. */
    long pid = json_integer_value(json_object_get(ctx->version, "pid"));
    if (pid <= 0) {
        say(f, DOCTOR_ABSENT, "the daemon is not reached");
        return;
    }
    char path[64];
    snprintf(path, sizeof path, "/proc/%ld/limits", pid);
    /* The running daemon's /proc: this system's, whatever --root says. */
    const struct doctor_ctx live = {.root = ""};
    char *lim = slurp(&live, path);
    char *line = lim ? strstr(lim, "Max open files") : NULL;
    unsigned long soft = 0;
    if (!line || sscanf(line + 14, " %lu", &soft) != 1) {
        say(f, DOCTOR_ABSENT, "cannot read the daemon's descriptor limit (%s)", path);
        free(lim);
        return;
    }
    free(lim);
    unsigned api = conf_bound(ctx, "api-max-connections");
    struct fdbudget b = {.nofile = soft, .api_max_connections = api ? api : 512,
                         .max_client_connections = conf_bound(ctx, "max-client-connections"),
                         .user_max_connections = conf_bound(ctx, "user-max-connections")};
    char warning[512];
    if (fdbudget_plan(&b, warning, sizeof warning) != 0) {
        say(f, DOCTOR_BROKEN, "convgpud (pid %ld): %s", pid, warning);
        fix(f, "run it from the unit (LimitNOFILE=65536: systemctl restart convgpud), or ulimit "
               "-n 65536 before starting it by hand");
        return;
    }
    say(f, DOCTOR_OK, "convgpud may open %lu descriptors: %u container connections, %u per "
                      "user",
        soft, b.max_client_connections, b.user_max_connections);
}

/* kubectl on this node: the RuntimeClass and the DRA DeviceClass convgpu's manifests make. */
static void check_kube_objects(const struct doctor_ctx *ctx, struct doctor_finding *f)
{
    (void)ctx;
    const char *kubectl = getenv("CONVGPU_KUBECTL");
    if (!kubectl || !*kubectl)
        kubectl = "kubectl";
    char cmd[PATH_MAX + 128];
    snprintf(cmd, sizeof cmd, "command -v '%s' >/dev/null 2>&1", kubectl);
    if (system(cmd) != 0) {
        say(f, DOCTOR_ABSENT, "no kubectl here");
        return;
    }
    snprintf(cmd, sizeof cmd, "'%s' get runtimeclass convgpu -o name >/dev/null 2>&1", kubectl);
    if (system(cmd) != 0) {
        say(f, DOCTOR_BROKEN, "the cluster has no RuntimeClass convgpu: pods asking for it stay "
                              "pending");
        fix(f, "kubectl apply -f packaging/k8s/runtimeclass.yaml");
        return;
    }
    snprintf(cmd, sizeof cmd, "'%s' get deviceclass -o name 2>/dev/null | grep -q convgpu",
             kubectl);
    bool dra = system(cmd) == 0;
    say(f, DOCTOR_OK, "RuntimeClass convgpu present%s", dra ? "; a convgpu DRA DeviceClass" : "");
}

/* --deep: a tiny real container through Docker and the convgpu runtime, under a limit. */
static void check_deep_container(const struct doctor_ctx *ctx, struct doctor_finding *f)
{
    if (!ctx->deep) {
        say(f, DOCTOR_ABSENT, "not run (convgpu doctor --deep runs a tiny container)");
        return;
    }
    const char *docker = getenv("CONVGPU_DOCKER");
    const char *image = getenv("CONVGPU_DOCTOR_IMAGE");
    if (!docker || !*docker)
        docker = "docker";
    if (!image || !*image)
        image = "busybox";
    char cmd[PATH_MAX + 256];
    snprintf(cmd, sizeof cmd, "'%s' run --rm --runtime convgpu -e CONVGPU_GPU_MEMORY=64MiB "
                              "'%s' true 2>&1", docker, image);
    FILE *p = popen(cmd, "r");
    char out[256] = "";
    size_t n = p ? fread(out, 1, sizeof out - 1, p) : 0;
    out[n] = '\0';
    out[strcspn(out, "\n")] = '\0';
    int rc = p ? pclose(p) : -1;
    if (rc != 0) {
        say(f, DOCTOR_BROKEN, "a 64MiB container of %s under the convgpu runtime failed: %s",
            image, out[0] ? out : "(no output)");
        fix(f, "convgpu setup docker && systemctl restart docker; docker pull %s", image);
        return;
    }
    say(f, DOCTOR_OK, "a 64MiB container of %s ran under the convgpu runtime", image);
}

static void check_docker(const struct doctor_ctx *ctx, struct doctor_finding *f)
{
    if (!exists(ctx, "/etc/docker")) {
        say(f, DOCTOR_ABSENT, "no Docker here (/etc/docker)");
        return;
    }
    char *text = slurp(ctx, "/etc/docker/daemon.json");
    json_t *conf = text ? json_loads(text, 0, NULL) : NULL;
    free(text);
    json_t *rt = json_object_get(json_object_get(conf, "runtimes"), "convgpu");
    const char *path = json_string_value(json_object_get(rt, "path"));
    char p[PATH_MAX];
    if (!path)
        say(f, DOCTOR_BROKEN, "Docker has no runtime named convgpu (/etc/docker/daemon.json)");
    else if (access(doctor_path(ctx, path, p, sizeof p), X_OK) != 0)
        say(f, DOCTOR_BROKEN, "Docker's convgpu runtime is %s, which is not there", path);
    else
        say(f, DOCTOR_OK, "Docker runs convgpu containers with %s", path);
    json_decref(conf);
    if (f->status == DOCTOR_BROKEN)
        fix(f, "convgpu setup docker && systemctl restart docker");
}

static void check_containerd(const struct doctor_ctx *ctx, struct doctor_finding *f)
{
    if (!exists(ctx, "/etc/containerd/config.toml")) {
        say(f, DOCTOR_ABSENT, "no containerd configuration here");
        return;
    }
    if (!file_has(ctx, "/etc/containerd/config.toml", "convgpu")) {
        say(f, DOCTOR_BROKEN, "containerd's config.toml has no convgpu runtime entry");
        fix(f, "add packaging/k8s/containerd-convgpu.toml's runtime to /etc/containerd/config.toml "
               "(docs/KUBERNETES.md), then systemctl restart containerd");
        return;
    }
    say(f, DOCTOR_OK, "containerd has a convgpu runtime entry");
}

static void check_kubelet(const struct doctor_ctx *ctx, struct doctor_finding *f)
{
    const char *dir = "/var/lib/kubelet/device-plugins";
    if (!exists(ctx, dir)) {
        say(f, DOCTOR_ABSENT, "no kubelet here (%s)", dir);
        return;
    }
    if (!exists(ctx, "/var/lib/kubelet/device-plugins/convgpu-memory.sock") &&
        !exists(ctx, "/var/lib/kubelet/plugins_registry/convgpu.io-reg.sock")) {
        say(f, DOCTOR_BROKEN, "neither convgpu's device plugin nor its DRA driver is "
                              "registered with kubelet (%s)", dir);
        fix(f, "kubectl apply -f packaging/k8s/daemonset.yaml (the node's convgpu-device-plugin), "
               "then kubectl -n kube-system logs ds/convgpu");
        return;
    }
    say(f, DOCTOR_OK, "convgpu is registered with kubelet");
}

/* plugstack.conf, or one of plugstack.conf.d's files, names convgpu_spank.so. */
static bool plugstack_has_convgpu(const struct doctor_ctx *ctx)
{
    if (file_has(ctx, "/etc/slurm/plugstack.conf", "convgpu_spank.so"))
        return true;
    char d[PATH_MAX];
    DIR *dir = opendir(doctor_path(ctx, "/etc/slurm/plugstack.conf.d", d, sizeof d));
    bool yes = false;
    for (struct dirent *e; dir && !yes && (e = readdir(dir));) {
        char rel[PATH_MAX];
        snprintf(rel, sizeof rel, "/etc/slurm/plugstack.conf.d/%s", e->d_name);
        yes = e->d_name[0] != '.' && file_has(ctx, rel, "convgpu_spank.so");
    }
    if (dir)
        closedir(dir);
    return yes;
}

static void check_slurm(const struct doctor_ctx *ctx, struct doctor_finding *f)
{
    if (!exists(ctx, "/etc/slurm/slurm.conf")) {
        say(f, DOCTOR_ABSENT, "no Slurm here (/etc/slurm/slurm.conf)");
        return;
    }
    if (!plugstack_has_convgpu(ctx)) {
        say(f, DOCTOR_BROKEN, "Slurm's plugstack does not load convgpu_spank.so: steps run "
                              "without limits");
        fix(f, "echo 'required /usr/lib/convgpu/convgpu_spank.so' > "
               "/etc/slurm/plugstack.conf.d/convgpu.conf (docs/SLURM.md)");
        return;
    }
    if (file_has(ctx, "/etc/slurm/slurm.conf", "JobSubmitPlugins=lua") &&
        !file_has(ctx, "/etc/slurm/job_submit.lua", "convgpu")) {
        say(f, DOCTOR_BROKEN, "slurm.conf uses job_submit/lua but /etc/slurm/job_submit.lua is "
                              "not convgpu's: --gpu-mem is not turned into GRES");
        fix(f, "cp /usr/share/convgpu/slurm/job_submit.lua /etc/slurm/job_submit.lua && "
               "scontrol reconfigure");
        return;
    }
    /* Every line `convgpu slurm gres-conf` prints for this node must be in gres.conf: the
     * controller counts GPU memory and compute by them. */
    char *gres = slurp(ctx, "/etc/slurm/gres.conf");
    char self[PATH_MAX], cmd[2 * PATH_MAX + 64], line[512], missing[256] = "";
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    self[n > 0 ? n : 0] = '\0';
    snprintf(cmd, sizeof cmd, "'%s' --runtime-dir '%s' slurm gres-conf 2>/dev/null", self,
             cli_runtime_dir());
    FILE *p = ctx->version ? popen(cmd, "r") : NULL;
    unsigned lines = 0;
    while (p && fgets(line, sizeof line, p)) {
        line[strcspn(line, "\n")] = '\0';
        if (!line[0] || line[0] == '#')
            continue;
        lines++;
        if (!missing[0] && (!gres || !strstr(gres, line)))
            snprintf(missing, sizeof missing, "%.200s", line);
    }
    if (p)
        pclose(p);
    free(gres);
    if (missing[0] || (!ctx->version && !file_has(ctx, "/etc/slurm/gres.conf", "gpumem"))) {
        say(f, DOCTOR_BROKEN, "gres.conf lacks the daemon's line '%s': the controller counts "
                              "this node's GPU memory wrong",
            missing[0] ? missing : "Name=gpumem");
        fix(f, "convgpu slurm gres-conf (put its NodeName lines in /etc/slurm/gres.conf), then "
               "scontrol reconfigure");
        return;
    }
    say(f, DOCTOR_OK, "plugstack loads convgpu_spank.so; gres.conf has the daemon's %u lines",
        lines);
}

#define CDI_SPEC "/etc/cdi/convgpu.json"

/* Every hook of a CDI spec, the shared edits' and each device's, appended to out. */
static void cdi_hooks(json_t *spec, json_t *out)
{
    size_t i, k;
    json_t *h, *dev;
    json_array_foreach(json_object_get(json_object_get(spec, "containerEdits"), "hooks"), i, h)
        json_array_append(out, h);
    json_array_foreach(json_object_get(spec, "devices"), k, dev) {
        json_array_foreach(json_object_get(json_object_get(dev, "containerEdits"), "hooks"), i, h)
            json_array_append(out, h);
    }
}

/* The value after --runtime-dir in a hook's args; NULL when it has none. */
static const char *hook_rundir(json_t *hook)
{
    json_t *args = json_object_get(hook, "args"), *a;
    size_t i;
    json_array_foreach(args, i, a) {
        const char *s = json_string_value(a);
        if (s && strcmp(s, "--runtime-dir") == 0)
            return json_string_value(json_array_get(args, i + 1));
    }
    return NULL;
}

static bool env_has(json_t *list, const char *entry)
{
    size_t i;
    json_t *e;
    json_array_foreach(list, i, e) {
        const char *s = json_string_value(e);
        if (s && strcmp(s, entry) == 0)
            return true;
    }
    return false;
}

/* The first difference between two CDI env lists ("NAME=VALUE" strings), said into out: a
 * variable whose value changed, one the spec lacks, one it sets and should not. False when both
 * hold the same entries. */
static bool env_differs(json_t *have, json_t *want, char *out, size_t len)
{
    size_t i, k;
    json_t *w, *h;
    json_array_foreach(want, i, w) {
        const char *ws = json_string_value(w);
        if (!ws || env_has(have, ws))
            continue;
        size_t name = strcspn(ws, "=");
        json_array_foreach(have, k, h) {
            const char *hs = json_string_value(h);
            if (hs && strncmp(hs, ws, name) == 0 && hs[name] == '=') {
                snprintf(out, len, "%.*s is %.150s in the spec, %.150s now", (int)name, ws,
                         hs + name + 1, ws + name + 1);
                return true;
            }
        }
        snprintf(out, len, "the spec lacks %.300s", ws);
        return true;
    }
    json_array_foreach(have, k, h) {
        const char *hs = json_string_value(h);
        if (hs && !env_has(want, hs)) {
            snprintf(out, len, "the spec sets %.300s, which the daemon no longer does", hs);
            return true;
        }
    }
    return false;
}

/* What is stale in the installed spec against the one `convgpu cdi generate` would write now,
 * said into f; false when they are equal. */
static bool cdi_stale(json_t *have, json_t *want, struct doctor_finding *f)
{
    json_t *hdevs = json_object_get(have, "devices"), *wdevs = json_object_get(want, "devices");
    char why[400];
    if (json_array_size(hdevs) != json_array_size(wdevs)) {
        say(f, DOCTOR_BROKEN, "the CDI spec names %zu GPUs, the daemon has %zu: it is stale",
            json_array_size(hdevs), json_array_size(wdevs));
        return true;
    }
    for (size_t i = 0; i < json_array_size(wdevs); i++) {
        json_t *hd = json_array_get(hdevs, i), *wd = json_array_get(wdevs, i);
        if (json_equal(hd, wd))
            continue;
        if (!env_differs(json_object_get(json_object_get(hd, "containerEdits"), "env"),
                         json_object_get(json_object_get(wd, "containerEdits"), "env"), why,
                         sizeof why))
            snprintf(why, sizeof why, "its name or hooks differ");
        say(f, DOCTOR_BROKEN, "the CDI spec's device %zu is not the daemon's GPU %zu now (%s): "
                              "it is stale", i, i, why);
        return true;
    }
    if (env_differs(json_object_get(json_object_get(have, "containerEdits"), "env"),
                    json_object_get(json_object_get(want, "containerEdits"), "env"), why,
                    sizeof why)) {
        say(f, DOCTOR_BROKEN, "the CDI spec's environment is not the daemon's now (%s): it is "
                              "stale", why);
        return true;
    }
    if (!json_equal(have, want)) {
        say(f, DOCTOR_BROKEN, "the CDI spec differs from what convgpu cdi generate writes now "
                              "(cdiVersion %s, kind %s, hooks)",
            json_string_value(json_object_get(want, "cdiVersion")),
            json_string_value(json_object_get(want, "kind")));
        return true;
    }
    return false;
}

/* The installed spec, compared with what `convgpu cdi generate` would write now for this
 * daemon: its hooks must be there and ask this daemon's runtime directory, and its devices and
 * environment must be the daemon's (a spec made before a driver update, a moved emulator or
 * another GPU count is stale). The spec names no interposer: its createRuntime hook gets the
 * interposer from the daemon as each container starts (the versions check compares those). */
static void check_cdi(const struct doctor_ctx *ctx, struct doctor_finding *f)
{
    if (!exists(ctx, "/etc/containers") && !exists(ctx, "/etc/cdi")) {
        say(f, DOCTOR_ABSENT, "no Podman or CDI here (/etc/containers, /etc/cdi)");
        return;
    }
    char *text = slurp(ctx, CDI_SPEC);
    json_t *spec = text ? json_loads(text, 0, NULL) : NULL;
    free(text);
    const char *rundir = cli_runtime_dir();
    json_t *devices = json_is_array(ctx->devices) ? ctx->devices
                                                  : json_object_get(ctx->devices, "devices");
    json_t *hooks = json_array(), *want = NULL, *h;
    const char *shim = NULL;
    char p[PATH_MAX], err[256];
    size_t i;
    if (!spec) {
        say(f, DOCTOR_BROKEN, "no CDI spec " CDI_SPEC " (or not JSON): podman run --device "
                              "convgpu.io/gpu=N fails");
        goto out;
    }
    cdi_hooks(spec, hooks);
    json_array_foreach(hooks, i, h) {
        const char *path = json_string_value(json_object_get(h, "path"));
        const char *when = json_string_value(json_object_get(h, "hookName"));
        const char *dir = hook_rundir(h);
        if (!path || access(doctor_path(ctx, path, p, sizeof p), X_OK) != 0) {
            say(f, DOCTOR_BROKEN, "the CDI spec's %s hook runs %s, which is not there: every "
                                  "container given a convgpu.io/gpu device fails to start",
                when ? when : "(unnamed)", path ? path : "(no path)");
            goto out;
        }
        if (!dir || strcmp(dir, rundir) != 0) {
            say(f, DOCTOR_BROKEN, "the CDI spec's hooks ask convgpud in %s, but it runs in %s: "
                                  "containers given a convgpu.io/gpu device fail to start",
                dir ? dir : "(no --runtime-dir)", rundir);
            goto out;
        }
        if (!shim)
            shim = path;
    }
    if (!shim) {
        say(f, DOCTOR_BROKEN, "the CDI spec " CDI_SPEC " has no convgpu hook: its containers "
                              "would run without a limit");
        goto out;
    }
    if (!ctx->version || !json_is_array(devices)) {
        say(f, DOCTOR_OK, "CDI spec " CDI_SPEC " (%zu devices; not compared: the daemon is not "
                          "reached)",
            json_array_size(json_object_get(spec, "devices")));
        goto out;
    }
    want = cli_cdi_spec(ctx->version, devices, shim, rundir, err, sizeof err);
    if (!want)
        say(f, DOCTOR_WARN, "cannot tell what the CDI spec should be: %s", err);
    else if (!cdi_stale(spec, want, f))
        say(f, DOCTOR_OK, "CDI spec " CDI_SPEC " is what convgpu cdi generate writes now (%zu "
                          "devices, hooks %s, runtime directory %s)",
            json_array_size(json_object_get(spec, "devices")), shim, rundir);
out:
    if (f->status == DOCTOR_BROKEN)
        fix(f, "convgpu --runtime-dir %s cdi generate --output " CDI_SPEC, rundir);
    json_decref(want);
    json_decref(hooks);
    json_decref(spec);
}

const struct doctor_check doctor_checks[] = {
    {"driver", "the NVIDIA driver and NVML, with versions", check_driver},
    {"daemon", "convgpud answers, at this convgpu's version", check_daemon},
    {"versions", "the interposer and the shim at the daemon's version", check_versions},
    {"context", "the measured per-process context charge", check_context},
    {"rundir", "the runtime directory's mode", check_rundir},
    {"fd-limit", "the daemon's descriptor limit", check_fd_limit},
    {"docker", "Docker's convgpu runtime", check_docker},
    {"container", "--deep: a tiny real container under a limit", check_deep_container},
    {"containerd", "containerd's convgpu runtime entry", check_containerd},
    {"kube-objects", "the RuntimeClass and DRA objects, where kubectl is", check_kube_objects},
    {"kubelet", "the device plugin or DRA driver registered with kubelet", check_kubelet},
    {"slurm", "Slurm's plugstack, job_submit.lua and gres.conf", check_slurm},
    {"cdi", "the CDI spec, present and current", check_cdi},
};
const size_t doctor_ncheck = sizeof doctor_checks / sizeof doctor_checks[0];
