/* cdi_hook.c — `convgpu-runtime hook cdi-create-runtime --device N`: the createRuntime hook of
 * convgpu's CDI spec (`convgpu cdi generate`). Follow one `podman run --device convgpu.io/gpu=0
 * -e CONVGPU_GPU_MEMORY=1GiB IMAGE`:
 *
 *   1. Podman applies the spec's edits to config.json (CUDA_VISIBLE_DEVICES, this hook and the
 *      poststop hook) and runs plain runc; runc sets up the container's mounts and, before it
 *      switches to the container's root, runs this hook with the OCI state on stdin.
 *   2. The hook reads the request from the bundle's config.json exactly as the OCI shim does
 *      (CONVGPU_GPU_MEMORY, else the annotations; compute share and mode), the GPU from the
 *      device's --device, checks the image's /etc/ld.so.preload (bundle.h: never an open that
 *      can block), and only then registers the container with convgpud (POST /v1/containers,
 *      with a start deadline: a hook killed before step 4 leaves a registration the daemon
 *      removes by itself).
 *   3. It bind-mounts, into the container's mount namespace: the container's private directory
 *      at /run/convgpu (its socket), the interposer, an ld.so.preload that loads the interposer
 *      into every process (the image's own lines kept), and on the emulated GPU the emulator.
 *   4. It reports the init pid (POST .../start): the daemon removes the container when that
 *      process exits. The poststop hook (hook.c) releases it too; either may come first.
 *
 * Invariant: a failed hook leaves nothing registered, and runc then does not start the container
 * (Podman prints the hook's stderr). The CDI spec is the node's, made before the container; it
 * cannot know the container's id, which is why this is a hook and not a spec edit. */
#include "cdi_hook.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bundle.h"
#include "control.h"
#include "log.h"
#include "nsmount.h"
#include "size.h"
#include "spec.h"
#include "state.h"

#define CDI_HOOK_NAME "cdi-create-runtime"

/* How many of config.json's createRuntime hooks are this one: a container's memory comes from
 * one GPU, so two convgpu devices in one container are refused rather than half-honoured. */
static size_t cdi_hooks_in(json_t *config)
{
    json_t *arr = json_object_get(json_object_get(config, "hooks"), "createRuntime");
    size_t n = 0, i, k;
    json_t *h, *a;
    json_array_foreach(arr, i, h) {
        json_array_foreach(json_object_get(h, "args"), k, a) {
            const char *s = json_string_value(a);
            if (s && strcmp(s, CDI_HOOK_NAME) == 0) {
                n++;
                break;
            }
        }
    }
    return n;
}

/* Whether the OCI shim already wired this container (its mount at /run/convgpu): the shim and
 * the CDI device would each register it, the second replacing the first under its mounts. */
static bool wired_by_shim(json_t *config)
{
    size_t i;
    json_t *m;
    json_array_foreach(json_object_get(config, "mounts"), i, m) {
        const char *d = json_string_value(json_object_get(m, "destination"));
        if (d && strcmp(d, OCI_CG_DIR) == 0)
            return true;
    }
    return false;
}

/* For the durations the log reports, as the shim's do: a slow daemon shows there. */
static double mono_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static int parse_device(const char *s, long *out)
{
    char *end = NULL;
    long v = s && *s >= '0' && *s <= '9' ? strtol(s, &end, 10) : -1;
    if (v < 0 || v > 1023 || !end || *end)
        return -1;
    *out = v;
    return 0;
}

/* The mounts of step 3, from the daemon's answer. Returns the count, or -1 when the answer
 * names no interposer. */
static int mounts_for(json_t *ans, const char *preload, struct oci_nsmount *m, size_t cap,
                      char **libcopy)
{
    json_t *env = json_object_get(ans, "env");
    const char *dir = json_string_value(json_object_get(ans, "dir"));
    const char *lib = json_string_value(json_object_get(env, "LD_PRELOAD"));
    const char *libpath = json_string_value(json_object_get(env, "LD_LIBRARY_PATH"));
    const char *state = json_string_value(json_object_get(env, "CONVGPU_EMU_STATE"));
    if (!dir || !lib || lib[0] != '/')
        return -1;
    size_t n = 0;
    m[n++] = (struct oci_nsmount){.source = dir, .dest = OCI_CG_DIR, .dir = true};
    m[n++] = (struct oci_nsmount){.source = lib, .dest = OCI_CG_LIB};
    m[n++] = (struct oci_nsmount){.source = preload, .dest = OCI_CG_PRELOAD};
    /* The emulator's libraries at their own paths (the spec's LD_LIBRARY_PATH names them). */
    *libcopy = libpath ? strdup(libpath) : NULL;
    char *save = NULL;
    for (char *d = *libcopy ? strtok_r(*libcopy, ":", &save) : NULL; d && n + 1 < cap;
         d = strtok_r(NULL, ":", &save))
        if (d[0] == '/')
            m[n++] = (struct oci_nsmount){.source = d, .dest = d, .dir = true};
    if (state && state[0] == '/' && n < cap)
        m[n++] = (struct oci_nsmount){.source = state, .dest = OCI_CG_EMU_STATE, .writable = true};
    return (int)n;
}

/* The variable the spec set must name the GPU the daemon put the container on: a spec made
 * before the daemon's GPUs changed would otherwise show the application another GPU. */
static int check_visible(json_t *config, json_t *ans, char *err, size_t errlen)
{
    const char *want = json_string_value(
        json_object_get(json_object_get(ans, "env"), "CUDA_VISIBLE_DEVICES"));
    json_t *env = json_object_get(json_object_get(config, "process"), "env");
    const char *got = NULL;
    size_t i;
    json_t *v;
    json_array_foreach(env, i, v) {
        const char *s = json_string_value(v);
        if (s && strncmp(s, "CUDA_VISIBLE_DEVICES=", 21) == 0)
            got = s + 21;
    }
    if (want && (!got || strcmp(got, want) != 0)) {
        snprintf(err, errlen, "the container sees CUDA_VISIBLE_DEVICES=%s but convgpud placed it "
                              "on %s: the CDI spec is stale (run convgpu cdi generate again)",
                 got ? got : "(unset)", want);
        return -1;
    }
    return 0;
}

static int register_and_mount(const char *id, long pid, const char *bundle, long device)
{
    char err[2048], rootfs[PATH_MAX], preload[PATH_MAX], size[CG_SIZE_BUFLEN];
    bool pretty;
    json_t *config = oci_bundle_load(bundle, &pretty, err, sizeof err);
    if (!config) {
        oci_log(OCI_LOG_ERROR, "container %s: %s", id, err);
        return 1;
    }
    struct oci_request req;
    const char *root = json_string_value(json_object_get(json_object_get(config, "root"), "path"));
    int rc = 1;
    if (oci_spec_request(config, &req, err, sizeof err) != 0) {
        oci_log(OCI_LOG_ERROR, "container %s: %s; nothing registered", id, err);
    } else if (!req.wanted) {
        oci_log(OCI_LOG_ERROR, "container %s asks for convgpu.io/gpu=%ld but for no GPU memory: "
                               "set " OCI_ENV_MEMORY " (e.g. -e " OCI_ENV_MEMORY "=1GiB) or the "
                               OCI_ANN_MEMORY " annotation", id, device);
    } else if (req.device >= 0 && req.device != device) {
        oci_log(OCI_LOG_ERROR, "container %s asks for GPU %ld (" OCI_ENV_DEVICE ") and for the "
                               "CDI device convgpu.io/gpu=%ld: one GPU only", id, req.device,
                device);
    } else if (wired_by_shim(config)) {
        oci_log(OCI_LOG_ERROR, "container %s has " OCI_CG_DIR " mounted already (run with "
                               "--runtime convgpu?): use the convgpu runtime or the CDI device "
                               "convgpu.io/gpu, not both", id);
    } else if (cdi_hooks_in(config) > 1) {
        oci_log(OCI_LOG_ERROR, "container %s asks for %zu convgpu.io/gpu devices: a "
                               "container's GPU memory comes from one GPU, ask for one", id,
                cdi_hooks_in(config));
    } else if (!root || (root[0] != '/' && strlen(bundle) + strlen(root) + 2 > sizeof rootfs)) {
        oci_log(OCI_LOG_ERROR, "container %s: config.json has no usable root.path", id);
    } else if (!oci_state_path(id, "ld.so.preload", preload, sizeof preload)) {
        oci_log(OCI_LOG_ERROR, "container id '%.80s': %s", id, oci_state_id_problem(id));
    } else {
        rc = 0;
    }
    /* The image is checked before anything is registered: nothing it holds (a FIFO, a device,
     * a huge file) may hold up a hook that has a registration to finish (issue 42). */
    char *image = NULL, *text = NULL;
    if (rc == 0 && oci_bundle_image_preload(bundle, config, &image, err, sizeof err) != 0) {
        oci_log(OCI_LOG_ERROR, "container %s: %s; nothing registered", id, err);
        rc = 1;
    } else if (rc == 0 && !(text = oci_preload_text(image))) {
        oci_log(OCI_LOG_ERROR, "container %s: out of memory; nothing registered", id);
        rc = 1;
    }
    free(image);
    if (rc != 0) {
        json_decref(config);
        return rc;
    }
    if (root[0] == '/')
        snprintf(rootfs, sizeof rootfs, "%s", root);
    else
        snprintf(rootfs, sizeof rootfs, "%s/%s", bundle, root);
    req.device = device;

    double t0 = mono_ms();
    json_t *ans = oci_register(id, &req, err, sizeof err);
    double t_registered = mono_ms(), t_mounted = t_registered;
    if (!ans) {
        oci_log(OCI_LOG_ERROR, "%s", err);
        free(text);
        json_decref(config);
        return 1;
    }
    struct oci_nsmount mounts[16];
    char *libcopy = NULL;
    int n = -1;
    rc = 1;
    if (check_visible(config, ans, err, sizeof err) == 0 &&
        oci_write_file(preload, text, err, sizeof err) == 0) {
        n = mounts_for(ans, preload, mounts, sizeof mounts / sizeof mounts[0], &libcopy);
        if (n < 0)
            snprintf(err, sizeof err, "the daemon's answer names no directory or interposer");
        else if (oci_nsmount((pid_t)pid, rootfs, mounts, (size_t)n, err, sizeof err) == 0)
            rc = 0;
        t_mounted = mono_ms();
    }
    if (rc == 0) {
        int st = oci_started(id, pid, err, sizeof err);
        if (st == 1)
            snprintf(err, sizeof err, "the registration was removed while the container was "
                                      "being created (convgpu rm?)");
        if (st != 0)
            rc = 1;
    }
    if (rc == 0) {
        if (oci_state_touch(id, OCI_STATE_WATCHED) != 0)
            oci_log(OCI_LOG_WARN, "container %s: cannot mark it watched", id);
        oci_log(OCI_LOG_INFO, "container %s: registered with %s of GPU memory (from %s) on "
                              "device %ld through CDI; init pid %ld reported (register %.2f ms, "
                              "mounts %.2f ms, report %.2f ms)", id,
                cg_format_size(req.bytes, size, sizeof size), req.source, device, pid,
                t_registered - t0, t_mounted - t_registered, mono_ms() - t_mounted);
    } else {
        oci_log(OCI_LOG_ERROR, "container %s: %s; released", id, err);
        char rerr[1024];
        if (oci_release(id, rerr, sizeof rerr) != 0)
            oci_log(OCI_LOG_WARN, "%s", rerr);
        oci_state_remove(id);
    }
    free(libcopy);
    free(text);
    json_decref(ans);
    json_decref(config);
    return rc;
}

int oci_cdi_hook_main(int argc, char **argv)
{
    long device = -1;
    if (argc != 4 || strcmp(argv[2], "--device") != 0 || parse_device(argv[3], &device) != 0) {
        fprintf(stderr, "Usage: convgpu-runtime [--runtime-dir DIR] hook " CDI_HOOK_NAME
                        " --device INDEX\n(run by the OCI runtime, from the CDI spec that "
                        "`convgpu cdi generate` writes)\n");
        return 2;
    }
    json_error_t je;
    json_t *state = json_loadf(stdin, JSON_DISABLE_EOF_CHECK, &je);
    const char *id = json_string_value(json_object_get(state, "id"));
    const char *bundle = json_string_value(json_object_get(state, "bundle"));
    json_t *pidv = json_object_get(state, "pid");
    int rc = 1;
    if (!json_is_object(state) || !id || !*id || strchr(id, '/') || !bundle || bundle[0] != '/')
        oci_log(OCI_LOG_ERROR, "hook " CDI_HOOK_NAME ": stdin is not an OCI state with an id "
                               "and a bundle%s%s", state ? "" : ": ", state ? "" : je.text);
    else if (!json_is_integer(pidv) || json_integer_value(pidv) <= 0 ||
             json_integer_value(pidv) > 0x3fffffff)
        oci_log(OCI_LOG_ERROR, "hook " CDI_HOOK_NAME ": container %s: the state has no init pid",
                id);
    else
        rc = register_and_mount(id, (long)json_integer_value(pidv), bundle, device);
    json_decref(state);
    return rc;
}
