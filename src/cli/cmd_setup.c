/* cmd_setup.c — `convgpu setup docker|podman`: installs convgpu-runtime as a named OCI runtime
 * ("convgpu") in the engine's configuration, safely: the old file is backed up before it is
 * replaced (temporary file + rename, mode kept), every other setting is preserved (Docker's
 * daemon.json is read and written with jansson), running it twice changes nothing, --dry-run
 * prints the result instead, --remove takes the runtime out again. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "http.h"

#define RUNTIME_NAME "convgpu"

static void usage(FILE *f)
{
    fprintf(f, "Usage: convgpu [--runtime-dir DIR] setup docker|podman [OPTIONS]\n\n"
               "Installs convgpu-runtime as the OCI runtime named '" RUNTIME_NAME "':\n"
               "  docker  in /etc/docker/daemon.json (\"runtimes\"); then: docker run --runtime\n"
               "          " RUNTIME_NAME " ... or convgpu docker run --gpu-memory SIZE ...\n"
               "  podman  as a drop-in /etc/containers/containers.conf.d/50-convgpu.conf\n"
               "          ([engine.runtimes]); then: podman run --runtime " RUNTIME_NAME " ...\n"
               "A runtime directory other than /run/convgpu, and --runc, reach the shim as\n"
               "runtimeArgs (Docker: it then runs the shim through a /bin/sh wrapper, ~1 ms per\n"
               "OCI command) or conmon_env_vars (Podman: replaces containers.conf's list).\n"
               "The old file is backed up first (FILE.convgpu-backup-TIME); running setup\n"
               "again changes nothing.\n\n"
               "  --config FILE        the file to edit instead of the default\n"
               "  --runtime-path PATH  convgpu-runtime (default: next to this convgpu)\n"
               "  --runc PATH          the real runtime behind the shim (default: runc in PATH)\n"
               "  --dry-run            print the new file, change nothing\n"
               "  --remove             take the runtime out again\n");
}

#include <stdarg.h>

__attribute__((format(printf, 1, 2))) static int fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "convgpu setup: ");
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    return 1;
}

static char *slurp(const char *path, bool *exists)
{
    FILE *f = fopen(path, "re");
    *exists = f != NULL;
    if (!f)
        return NULL;
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap);
    size_t r;
    while (buf && (r = fread(buf + n, 1, cap - n - 1, f)) > 0) {
        n += r;
        if (n + 1 == cap) {
            char *nb = realloc(buf, cap *= 2);
            if (!nb) {
                free(buf);
                buf = NULL;
            } else {
                buf = nb;
            }
        }
    }
    if (buf)
        buf[n] = '\0';
    fclose(f);
    return buf;
}

static int mkdir_parent(const char *path)
{
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (!slash || slash == dir)
        return 0;
    *slash = '\0';
    for (char *p = dir + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(dir, 0755) != 0 && errno != EEXIST)
            return -1;
        *p = '/';
    }
    return mkdir(dir, 0755) != 0 && errno != EEXIST ? -1 : 0;
}

/* Backs up the old file (when there is one), then replaces it atomically with text (mode kept).
 * text NULL removes the file (after the backup). */
static int replace(const char *path, const char *old, bool existed, const char *text)
{
    struct stat st;
    mode_t mode = existed && stat(path, &st) == 0 ? (st.st_mode & 07777) : 0644;
    char tmp[PATH_MAX + 32], backup[PATH_MAX + 64];
    if (existed) {
        char stamp[32];
        time_t now = time(NULL);
        struct tm tm;
        strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", localtime_r(&now, &tm));
        snprintf(backup, sizeof backup, "%s.convgpu-backup-%s", path, stamp);
        FILE *b = fopen(backup, "wxe");
        if (!b || fputs(old, b) == EOF || fclose(b) != 0) {
            if (b)
                fclose(b);
            return fail("cannot back up %s to %s; nothing changed", path, backup);
        }
        chmod(backup, mode);
        printf("backed up %s to %s\n", path, backup);
    }
    if (!text) {
        if (unlink(path) != 0)
            return fail("cannot remove %s: %s", path, strerror(errno));
        return 0;
    }
    if (mkdir_parent(path) != 0)
        return fail("cannot create the directory of %s: %s", path, strerror(errno));
    snprintf(tmp, sizeof tmp, "%s.convgpu-tmp", path);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, mode);
    if (fd < 0)
        return fail("cannot write %s: %s (run as root, or pass --config FILE)", tmp, strerror(errno));
    size_t len = strlen(text);
    bool ok = fchmod(fd, mode) == 0 && write(fd, text, len) == (ssize_t)len && fsync(fd) == 0;
    ok = close(fd) == 0 && ok;
    if (!ok || rename(tmp, path) != 0) {
        unlink(tmp);
        return fail("cannot replace %s: %s; nothing changed", path, strerror(errno));
    }
    return 0;
}

static int setup_docker(const char *path, const char *shim, const char *runc, bool dry, bool rm)
{
    bool existed;
    char *old = slurp(path, &existed);
    if (existed && !old)
        return fail("cannot read %s", path);
    json_t *conf;
    if (!existed || !old[strspn(old, " \t\r\n")]) {
        conf = json_object();
    } else {
        json_error_t je;
        conf = json_loads(old, 0, &je);
        if (!conf) {
            char where[256];
            snprintf(where, sizeof where, "%s (line %d, column %d)", je.text, je.line, je.column);
            free(old);
            return fail("%s is not valid JSON: %s; fix it or move it away — nothing changed",
                        path, where);
        }
        if (!json_is_object(conf)) {
            json_decref(conf);
            free(old);
            return fail("%s is not a JSON object; nothing changed", path);
        }
    }
    json_t *runtimes = json_object_get(conf, "runtimes");
    if (runtimes && !json_is_object(runtimes)) {
        json_decref(conf);
        free(old);
        return fail("%s: \"runtimes\" is not an object; nothing changed", path);
    }
    /* runtimeArgs only where the defaults do not do: for a runtime with arguments dockerd
     * writes a /bin/sh wrapper script and runs it for every OCI command (~1 ms each, some five
     * per container; docs/BENCHMARKS.md). */
    json_t *want = json_pack("{s:s}", "path", shim);
    json_t *args = json_array();
    if (strcmp(cli_runtime_dir(), "/run/convgpu") != 0) {
        json_array_append_new(args, json_string("--runtime-dir"));
        json_array_append_new(args, json_string(cli_runtime_dir()));
    }
    if (runc) {
        json_array_append_new(args, json_string("--runtime"));
        json_array_append_new(args, json_string(runc));
    }
    if (json_array_size(args))
        json_object_set(want, "runtimeArgs", args);
    json_decref(args);
    json_t *have = runtimes ? json_object_get(runtimes, RUNTIME_NAME) : NULL;
    int rc = 0;
    if (rm ? !have : (have && json_equal(have, want))) {
        printf("%s: runtime '%s' %s; nothing changed\n", path, RUNTIME_NAME,
               rm ? "is not installed" : "is already installed");
        goto out;
    }
    if (rm) {
        json_object_del(runtimes, RUNTIME_NAME);
        if (json_object_size(runtimes) == 0)
            json_object_del(conf, "runtimes");
    } else {
        if (!runtimes) {
            runtimes = json_object();
            json_object_set_new(conf, "runtimes", runtimes);
        }
        json_object_set(runtimes, RUNTIME_NAME, want);
    }
    char *text = json_dumps(conf, JSON_INDENT(4) | JSON_REAL_PRECISION(17));
    size_t tl = text ? strlen(text) : 0;
    char *full = text ? malloc(tl + 2) : NULL;
    if (!full) {
        free(text);
        rc = fail("out of memory");
        goto out;
    }
    memcpy(full, text, tl);
    memcpy(full + tl, "\n", 2);
    free(text);
    if (dry) {
        fputs(full, stdout);
    } else if ((rc = replace(path, old ? old : "", existed, full)) == 0) {
        printf("%s runtime '%s' %s %s\n", rm ? "removed" : "installed", RUNTIME_NAME,
               rm ? "from" : "in", path);
        printf("Docker reads it at start: restart it (systemctl restart docker), or reload it\n"
               "without stopping containers: kill -HUP $(pidof dockerd)\n");
        if (!rm)
            printf("Then: convgpu docker run --gpu-memory 1GiB IMAGE ...  (convgpud must be running\n"
                   "with --runtime-dir %s)\n", cli_runtime_dir());
    }
    free(full);
out:
    json_decref(want);
    json_decref(conf);
    free(old);
    return rc;
}

static int setup_podman(const char *path, const char *shim, const char *runc, bool dry, bool rm)
{
    bool existed;
    char *old = slurp(path, &existed);
    if (existed && !old)
        return fail("cannot read %s", path);
    /* Podman passes runtimes no options and conmon no environment of its own: settings other
     * than the defaults reach the shim through conmon_env_vars, which conmon hands on to the
     * runtime. That key replaces containers.conf's list, so the default PATH comes along. */
    const char *dir = cli_runtime_dir();
    bool env = strcmp(dir, "/run/convgpu") != 0 || runc;
    for (const char *v = shim; v; v = v == shim ? dir : v == dir ? runc : NULL)
        if (v && strpbrk(v, "\"\\\n"))
            return fail("cannot write '%s' into TOML (no quotes, backslashes or newlines)", v);
    char text[PATH_MAX * 4], envs[PATH_MAX * 3] = "";
    if (env)
        snprintf(envs, sizeof envs,
                 "[engine]\n"
                 "# Podman passes runtimes no options: the shim's settings go through conmon's\n"
                 "# environment. This list replaces containers.conf's conmon_env_vars.\n"
                 "conmon_env_vars = [\"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:"
                 "/bin\", \"CONVGPU_RUNTIME_DIR=%s\"%s%s%s]\n\n",
                 dir, runc ? ", \"CONVGPU_RUNC=" : "", runc ? runc : "", runc ? "\"" : "");
    snprintf(text, sizeof text,
             "# Installed by `convgpu setup podman`: the convgpu OCI runtime.\n"
             "# Use: podman run --runtime " RUNTIME_NAME " -e CONVGPU_GPU_MEMORY=1GiB IMAGE ...\n"
             "%s[engine.runtimes]\n" RUNTIME_NAME " = [\"%s\"]\n", envs, shim);
    int rc = 0;
    if (rm ? !existed : (existed && strcmp(old, text) == 0)) {
        printf("%s: runtime '%s' %s; nothing changed\n", path, RUNTIME_NAME,
               rm ? "is not installed" : "is already installed");
    } else if (dry) {
        fputs(rm ? "" : text, stdout);
    } else if ((rc = replace(path, old ? old : "", existed, rm ? NULL : text)) == 0) {
        printf("%s runtime '%s' %s %s\nPodman reads it on every command: nothing to restart.\n",
               rm ? "removed" : "installed", RUNTIME_NAME, rm ? "from" : "in", path);
    }
    if (rc == 0 && !rm && !dry && env)
        printf("The runtime directory%s reach%s the shim through conmon_env_vars, which replaces\n"
               "containers.conf's own list: add any variables you had there to %s.\n",
               runc ? " and the real runtime" : "", runc ? "" : "es", path);
    free(old);
    return rc;
}

int cmd_setup(int argc, char **argv)
{
    static const struct option opts[] = {
        {"config", required_argument, NULL, 'c'},   {"runtime-path", required_argument, NULL, 'p'},
        {"runc", required_argument, NULL, 'r'},     {"dry-run", no_argument, NULL, 'n'},
        {"remove", no_argument, NULL, 'x'},         {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *config = NULL, *shim = NULL, *runc = NULL;
    bool dry = false, rm = false;
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (c) {
        case 'c': config = optarg; break;
        case 'p': shim = optarg; break;
        case 'r': runc = optarg; break;
        case 'n': dry = true; break;
        case 'x': rm = true; break;
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return 2;
        }
    }
    if (optind + 1 != argc || (strcmp(argv[optind], "docker") != 0 &&
                               strcmp(argv[optind], "podman") != 0)) {
        fprintf(stderr, "convgpu setup: say which engine: convgpu setup docker|podman\n");
        return 2;
    }
    bool docker = strcmp(argv[optind], "docker") == 0;
    char exe[PATH_MAX], guess[PATH_MAX + 32];
    if (!shim) {
        ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
        if (n <= 0)
            return fail("cannot find my own path: %s", strerror(errno));
        exe[n] = '\0';
        char *slash = strrchr(exe, '/');
        *slash = '\0';
        snprintf(guess, sizeof guess, "%s/convgpu-runtime", exe);
        shim = guess;
    }
    if (shim[0] != '/' || access(shim, X_OK) != 0)
        return fail("no executable convgpu-runtime at %s (pass --runtime-path PATH, absolute)",
                    shim);
    if (runc && runc[0] != '/')
        return fail("--runc wants an absolute path, not %s", runc);
    return docker ? setup_docker(config ? config : "/etc/docker/daemon.json", shim, runc, dry, rm)
                  : setup_podman(config ? config : "/etc/containers/containers.conf.d/50-convgpu.conf",
                                 shim, runc, dry, rm);
}
