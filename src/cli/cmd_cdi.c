/* cmd_cdi.c — `convgpu cdi generate`: writes a CDI spec (Container Device Interface, cdiVersion
 * 0.5.0, which Podman 4.3 reads) of kind convgpu.io/gpu, so that `podman run --device
 * convgpu.io/gpu=0 -e CONVGPU_GPU_MEMORY=1GiB IMAGE` runs under convgpu with no runtime of ours
 * in front of runc.
 *
 * One CDI device per GPU of the daemon, named by its index: a container's memory comes from one
 * GPU, and the size is the container's own (CONVGPU_GPU_MEMORY or an annotation, as for the OCI
 * shim). A spec is made before any container exists, so it cannot name a container's socket or
 * id; what is per container happens in the createRuntime hook it installs (`convgpu-runtime hook
 * cdi-create-runtime --device N`, src/integrations/oci/cdi_hook.c): it registers the container,
 * mounts its private directory, the interposer and ld.so.preload into the container and reports
 * the init pid; the daemon removes the container when that process exits, and the poststop hook
 * releases it for runtimes whose init outlives nothing. The spec holds only what is the node's:
 * the GPU's UUID and the emulator's variables (the daemon's `node_env`, GET /v1/version). */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cdi_spec.h"
#include "cli.h"
#include "http.h"

#define CDI_VERSION "0.5.0"
#define CDI_KIND "convgpu.io/gpu"
#define HOOK_TIMEOUT_S 30

static int usage(FILE *f, int rc)
{
    fprintf(f, "Usage: convgpu cdi generate [--output FILE] [--runtime-dir DIR]\n"
               "                            [--runtime-path PATH]\n\n"
               "Writes a CDI spec (cdiVersion " CDI_VERSION ", kind " CDI_KIND ") with one device\n"
               "per GPU of the daemon, named by its index, to FILE (atomically) or stdout:\n"
               "  convgpu cdi generate --output /etc/cdi/convgpu.json\n"
               "  podman run --device " CDI_KIND "=0 -e CONVGPU_GPU_MEMORY=1GiB IMAGE CMD\n"
               "The limit is the container's CONVGPU_GPU_MEMORY (or com.convgpu.gpu-memory);\n"
               "the spec's createRuntime hook registers the container with convgpud.\n"
               "Generate it again when the daemon's GPUs or its runtime directory change.\n\n"
               "  --output FILE        where to write the spec (default: stdout)\n"
               "  --runtime-dir DIR    convgpud's runtime directory, asked and written into\n"
               "                       the hooks (default: the global --runtime-dir)\n"
               "  --runtime-path PATH  convgpu-runtime, which runs the hooks (default: next\n"
               "                       to this convgpu)\n");
    return rc;
}

static int fail(const char *what, const char *detail)
{
    fprintf(stderr, "convgpu cdi generate: %s%s%s\n", what, detail ? ": " : "",
            detail ? detail : "");
    return 1;
}

static json_t *hook(const char *when, const char *shim, const char *rundir, const char *what,
                    const char *device)
{
    json_t *args = json_pack("[s,s,s,s,s]", "convgpu-runtime", "--runtime-dir", rundir, "hook",
                             what);
    if (args && device) {
        json_array_append_new(args, json_string("--device"));
        json_array_append_new(args, json_string(device));
    }
    return json_pack("{s:s,s:s,s:o,s:i}", "hookName", when, "path", shim, "args", args,
                     "timeout", HOOK_TIMEOUT_S);
}

/* The edits every convgpu device shares: the interposer's socket, the emulator's variables with
 * the paths they have inside the container (as the OCI shim writes them), and the poststop hook.
 * LD_PRELOAD is left to the container: the hook mounts /etc/ld.so.preload, which loads the
 * interposer into every process, and a CDI variable would replace the image's own LD_PRELOAD. */
static json_t *common_edits(json_t *node_env, const char *shim, const char *rundir)
{
    json_t *env = json_array();
    if (!env || cdi_add_env(env, "CONVGPU_SOCKET", CDI_IN_CONTAINER_SOCKET) != 0)
        return NULL;
    const char *key;
    json_t *v;
    json_object_foreach(node_env, key, v) {
        const char *s = json_string_value(v);
        if (!s || strcmp(key, "LD_PRELOAD") == 0)
            continue;
        if (strcmp(key, "CONVGPU_EMU_STATE") == 0)
            s = CDI_IN_CONTAINER_EMU_STATE;
        if (cdi_add_env(env, key, s) != 0)
            return NULL;
    }
    return json_pack("{s:o,s:[o]}", "env", env, "hooks",
                     hook("poststop", shim, rundir, "poststop", NULL));
}

static json_t *device_entry(json_t *dev, size_t i, const char *shim, const char *rundir)
{
    json_t *idx = json_object_get(dev, "index");
    const char *uuid = json_string_value(json_object_get(dev, "uuid"));
    if (!json_is_integer(idx) || json_integer_value(idx) != (json_int_t)i)
        return NULL;
    char name[24];
    snprintf(name, sizeof name, "%zu", i);
    json_t *env = json_array();
    /* What the daemon sets for a container on this GPU: its UUID, else its index. */
    if (!env || cdi_add_env(env, "CUDA_VISIBLE_DEVICES", uuid && *uuid ? uuid : name) != 0)
        return NULL;
    return json_pack("{s:s,s:{s:o,s:[o]}}", "name", name, "containerEdits", "env", env, "hooks",
                     hook("createRuntime", shim, rundir, "cdi-create-runtime", name));
}

/* The spec through a temporary file and rename(2) (cdi_spec.h): a reader (Podman rereads its CDI
 * directories) sees the old spec or the new one. /etc/cdi does not exist until a first spec is
 * installed: it is created (with its parents). */
static int write_atomically(const char *path, const char *text)
{
    char err[PATH_MAX + 128];
    if (cdi_write_atomically(path, text, CDI_WRITE_MKDIRS | CDI_WRITE_FSYNC, err, sizeof err) ==
        0)
        return 0;
    fprintf(stderr, "convgpu cdi generate: %s; nothing changed\n", err);
    return 1;
}

json_t *cli_cdi_spec(json_t *version, json_t *devices, const char *shim, const char *rundir,
                     char *err, size_t errlen)
{
    json_t *node_env = json_object_get(version, "node_env");
    if (!json_is_object(node_env)) {
        snprintf(err, errlen, "the daemon is older than this convgpu (no node_env in "
                              "/v1/version); upgrade it");
        return NULL;
    }
    if (!json_is_array(devices) || json_array_size(devices) == 0) {
        snprintf(err, errlen, "the daemon has no GPU");
        return NULL;
    }
    json_t *list = json_array(), *dev;
    size_t i;
    json_array_foreach(devices, i, dev) {
        json_t *e = device_entry(dev, i, shim, rundir);
        if (!e || json_array_append_new(list, e) != 0) {
            snprintf(err, errlen, "device %zu in the daemon's answer has no index %zu", i, i);
            json_decref(list);
            return NULL;
        }
    }
    json_t *common = common_edits(node_env, shim, rundir);
    json_t *spec = common ? json_pack("{s:s,s:s,s:o,s:o}", "cdiVersion", CDI_VERSION, "kind",
                                      CDI_KIND, "devices", list, "containerEdits", common)
                          : NULL;
    if (!spec) {
        if (!common)
            json_decref(list);
        snprintf(err, errlen, "out of memory");
    }
    return spec;
}

static int generate(const char *output, const char *shim)
{
    char terr[512] = "";
    json_t *version = NULL, *devices = NULL;
    long st = cli_request("GET", "/v1/version", NULL, &version, terr, sizeof terr);
    if (st != 200 || !json_is_object(version)) {
        cli_report_error(st, version, terr);
        json_decref(version);
        return 1;
    }
    st = cli_request("GET", "/v1/devices", NULL, &devices, terr, sizeof terr);
    if (st != 200 || !json_is_array(devices)) {
        cli_report_error(st, devices, terr);
        json_decref(version);
        json_decref(devices);
        return 1;
    }
    int rc = 1;
    char err[256];
    json_t *spec = cli_cdi_spec(version, devices, shim, cli_runtime_dir(), err, sizeof err);
    size_t ndev = json_array_size(json_object_get(spec, "devices"));
    char *text = spec ? json_dumps(spec, JSON_INDENT(2) | JSON_PRESERVE_ORDER) : NULL;
    if (!spec) {
        fail(err, NULL);
        goto out;
    }
    if (!text) {
        fail("out of memory", NULL);
        goto out;
    }
    size_t len = strlen(text);
    char *withnl = realloc(text, len + 2);
    if (!withnl) {
        free(text);
        fail("out of memory", NULL);
        goto out;
    }
    memcpy(withnl + len, "\n", 2);
    if (!output) {
        rc = fputs(withnl, stdout) == EOF || fflush(stdout) != 0 ? 1 : 0;
    } else {
        rc = write_atomically(output, withnl);
        if (rc == 0)
            fprintf(stderr, "convgpu cdi generate: wrote %s (%zu device%s: %s=0%s)\n", output,
                    ndev, ndev == 1 ? "" : "s", CDI_KIND, ndev > 1 ? "..." : "");
    }
    free(withnl);
out:
    json_decref(spec);
    json_decref(devices);
    json_decref(version);
    return rc;
}

int cmd_cdi(int argc, char **argv)
{
    if (cli_wants_help(argc, argv))
        return usage(stdout, 0);
    if (argc < 2 || strcmp(argv[1], "generate") != 0) {
        fprintf(stderr, "convgpu cdi: say what: convgpu cdi generate [OPTIONS]\n");
        return usage(stderr, 2);
    }
    static const struct option opts[] = {
        {"output", required_argument, NULL, 'o'},
        {"runtime-dir", required_argument, NULL, 'd'},
        {"runtime-path", required_argument, NULL, 'p'},
        {NULL, 0, NULL, 0},
    };
    const char *output = NULL, *shim = NULL;
    int c, ac = argc - 1; /* av[0] is "generate" */
    char **av = argv + 1;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(ac, av, "", opts, NULL)) != -1) {
        switch (c) {
        case 'o': output = optarg; break;
        case 'd':
            if (optarg[0] != '/') {
                fprintf(stderr, "convgpu cdi generate: --runtime-dir must be an absolute path, "
                                "not '%s'\n", optarg);
                return 2;
            }
            cli_set_runtime_dir(optarg);
            break;
        case 'p': shim = optarg; break;
        default:
            fprintf(stderr, "convgpu cdi generate: unknown option or missing value: '%s'\n",
                    av[optind - 1]);
            return usage(stderr, 2);
        }
    }
    if (optind < ac) {
        fprintf(stderr, "convgpu cdi generate: unexpected argument '%s'\n", av[optind]);
        return usage(stderr, 2);
    }
    if (output) {
        struct stat st;
        if (!*output)
            return fail("--output wants a file name", NULL);
        if (stat(output, &st) == 0 && !S_ISREG(st.st_mode)) {
            fprintf(stderr, "convgpu cdi generate: --output %s is not a regular file\n", output);
            return 2;
        }
    }
    char exe[PATH_MAX], guess[PATH_MAX + 32];
    if (!shim) {
        ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
        if (n <= 0)
            return fail("cannot find my own path", strerror(errno));
        exe[n] = '\0';
        *strrchr(exe, '/') = '\0';
        snprintf(guess, sizeof guess, "%s/convgpu-runtime", exe);
        shim = guess;
    }
    /* CDI wants an absolute hook path; a hook that cannot run fails every container. */
    struct stat sst;
    if (shim[0] != '/' || stat(shim, &sst) != 0 || !S_ISREG(sst.st_mode) ||
        access(shim, X_OK) != 0) {
        fprintf(stderr, "convgpu cdi generate: no executable convgpu-runtime at %s (pass "
                        "--runtime-path PATH, absolute)\n", shim);
        return 2;
    }
    return generate(output, shim);
}
