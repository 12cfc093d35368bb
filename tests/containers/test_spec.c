/* test_spec.c — unit tests of the shim's pure parts: the runtime command line (runc's global
 * options, the shim's own taken out), the GPU-memory request in config.json, the injection
 * (mounts, env, hooks; idempotent; the user's values kept) and the config.json file handling
 * (mode kept, bad JSON refused, nothing left behind). */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "args.h"
#include "bundle.h"
#include "spec.h"
#include "state.h"

#include "check.h"

#define STREQ(a, b) ((a) && (b) && strcmp((a), (b)) == 0)

static void test_args(void)
{
    char err[256];
    struct oci_args a;
    /* What containerd's shim runs, with the shim's options first (Docker's runtimeArgs). */
    char *v1[] = {"convgpu-runtime", "--runtime-dir", "/r", "--root", "/var/run/docker/runtime-runc/moby",
                  "--log", "/b/log.json", "--log-format", "json", "--runtime=/usr/sbin/runc",
                  "--systemd-cgroup", "create", "--bundle", "/b", "--pid-file", "/b/init.pid",
                  "--no-pivot", "abc123", NULL};
    CHECK(oci_args_parse(18, v1, &a, err, sizeof err) == 0);
    CHECK(STREQ(a.runtime, "/usr/sbin/runc"));
    CHECK(STREQ(a.runtime_dir, "/r"));
    CHECK(STREQ(a.log_path, "/b/log.json") && STREQ(a.log_format, "json"));
    CHECK(STREQ(a.command, "create") && a.cmd_index == 11);
    CHECK(STREQ(a.bundle, "/b") && STREQ(a.id, "abc123") && !a.detach);
    char *want1[] = {"/usr/sbin/runc", "--root", "/var/run/docker/runtime-runc/moby", "--log",
                     "/b/log.json", "--log-format", "json", "--systemd-cgroup", "create",
                     "--bundle", "/b", "--pid-file", "/b/init.pid", "--no-pivot", "abc123", NULL};
    CHECK(a.nfwd == 15 && a.nglobal == 7);
    for (int i = 0; i < 16 && i <= a.nfwd; i++)
        CHECK((want1[i] == NULL && a.fwd[i] == NULL) || STREQ(want1[i], a.fwd[i]));
    oci_args_free(&a);

    /* Go flag forms: -x, --x=v; -b; run -d; the id is the last positional. */
    char *v2[] = {"shim", "-log=/l", "-debug", "run", "-d", "-b", "/bb", "--console-socket=/s",
                  "myid", NULL};
    setenv("CONVGPU_RUNC", "/opt/crun", 1);
    CHECK(oci_args_parse(9, v2, &a, err, sizeof err) == 0);
    CHECK(STREQ(a.runtime, "/opt/crun") && STREQ(a.log_path, "/l"));
    CHECK(STREQ(a.command, "run") && a.detach && STREQ(a.bundle, "/bb") && STREQ(a.id, "myid"));
    CHECK(a.nfwd == 9 && STREQ(a.fwd[0], "/opt/crun") && STREQ(a.fwd[1], "-log=/l"));
    oci_args_free(&a);
    unsetenv("CONVGPU_RUNC");

    /* No command; a value option at the end is an error; cwd bundle. */
    char *v3[] = {"shim", "--version", NULL};
    CHECK(oci_args_parse(2, v3, &a, err, sizeof err) == 0 && !a.command && STREQ(a.runtime, "runc"));
    oci_args_free(&a);
    char *v4[] = {"shim", "--root", NULL};
    CHECK(oci_args_parse(2, v4, &a, err, sizeof err) != 0 && strstr(err, "--root"));
    char *v5[] = {"shim", "delete", "--force", "x1", NULL};
    CHECK(oci_args_parse(4, v5, &a, err, sizeof err) == 0 && STREQ(a.id, "x1") && !a.bundle);
    oci_args_free(&a);
}

static json_t *cfg(const char *text)
{
    json_error_t je;
    json_t *j = json_loads(text, 0, &je);
    if (!j)
        fprintf(stderr, "bad test JSON: %s\n", je.text);
    return j;
}

static void test_request(void)
{
    char err[512];
    struct oci_request r;
    json_t *c = cfg("{\"process\":{\"env\":[\"PATH=/bin\"]}}");
    CHECK(oci_spec_request(c, &r, err, sizeof err) == 0 && !r.wanted);
    json_decref(c);

    c = cfg("{\"process\":{\"env\":[\"CONVGPU_GPU_MEMORY=2GiB\",\"CONVGPU_GPU_DEVICE=1\"]},"
            "\"annotations\":{\"com.convgpu.gpu-memory\":\"1GiB\"}}");
    CHECK(oci_spec_request(c, &r, err, sizeof err) == 0 && r.wanted && r.bytes == (2ull << 30));
    CHECK(r.device == 1 && STREQ(r.source, OCI_ENV_MEMORY));
    json_decref(c);

    /* Several GPUs: the variable, else the annotation; one GPU when neither says. */
    c = cfg("{\"process\":{\"env\":[\"CONVGPU_GPU_MEMORY=1GiB\",\"CONVGPU_GPUS=2\"]},"
            "\"annotations\":{\"com.convgpu.gpus\":\"3\"}}");
    CHECK(oci_spec_request(c, &r, err, sizeof err) == 0 && r.wanted && r.gpus == 2);
    json_decref(c);
    c = cfg("{\"process\":{},\"annotations\":{\"com.convgpu.gpu-memory\":\"1GiB\","
            "\"com.convgpu.gpus\":\"4\"}}");
    CHECK(oci_spec_request(c, &r, err, sizeof err) == 0 && r.gpus == 4);
    json_decref(c);

    /* Kubernetes' GPU slots: the GPUs named, the totals kubelet counted split evenly over them,
     * the memory units' own GPU (kubelet's count) set aside. */
    c = cfg("{\"process\":{\"env\":[\"CONVGPU_GPU_MEMORY=4294967296\",\"CONVGPU_GPU_DEVICE=1\","
            "\"CONVGPU_K8S_GPUS=2,0\",\"CONVGPU_GPU_COMPUTE=60\"]}}");
    CHECK(oci_spec_request(c, &r, err, sizeof err) == 0 && r.wanted && r.gpus == 2 &&
          r.ndevices == 2 && r.devices[0] == 2 && r.devices[1] == 0 && r.device == -1 &&
          r.bytes == (2ull << 30) && r.compute_pct == 30);
    json_decref(c);
    c = cfg("{\"process\":{\"env\":[\"CONVGPU_GPU_MEMORY=1GiB\",\"CONVGPU_K8S_GPUS=3\","
            "\"CONVGPU_GPUS=1\"]}}");
    CHECK(oci_spec_request(c, &r, err, sizeof err) == 0 && r.gpus == 1 && r.ndevices == 1 &&
          r.devices[0] == 3 && r.bytes == (1ull << 30));
    json_decref(c);

    c = cfg("{\"process\":{},\"annotations\":{\"com.nvidia.memory.limit\":\"536870912\"}}");
    CHECK(oci_spec_request(c, &r, err, sizeof err) == 0 && r.wanted && r.bytes == (512u << 20));
    CHECK(STREQ(r.source, OCI_ANN_PAPER) && r.device == -1);
    json_decref(c);

    c = cfg("{\"process\":{},\"annotations\":{\"com.convgpu.gpu-memory\":\"1GiB\","
            "\"com.nvidia.memory.limit\":\"2GiB\"}}");
    CHECK(oci_spec_request(c, &r, err, sizeof err) == 0 && r.bytes == (1ull << 30));
    json_decref(c);

    const char *bad[] = {
        "{\"process\":{\"env\":[\"CONVGPU_GPU_MEMORY=lots\"]}}",
        "{\"process\":{\"env\":[\"CONVGPU_GPU_MEMORY=0\"]}}",
        "{\"process\":{\"env\":[\"CONVGPU_GPU_MEMORY=\"]}}",
        "{\"process\":{\"env\":[\"CONVGPU_GPU_MEMORY=99999999999TiB\"]}}",
        "{\"process\":{\"env\":[\"CONVGPU_GPU_MEMORY=1GiB\",\"CONVGPU_GPU_DEVICE=x\"]}}",
        "{\"process\":{\"env\":[\"CONVGPU_GPU_MEMORY=1GiB\",\"CONVGPU_GPUS=0\"]}}",
        "{\"process\":{\"env\":[\"CONVGPU_GPU_MEMORY=1GiB\",\"CONVGPU_GPUS=65\"]}}",
        "{\"process\":{\"env\":[\"CONVGPU_GPU_MEMORY=1GiB\",\"CONVGPU_GPUS=2x\"]}}",
        "{\"process\":{\"env\":[\"CONVGPU_GPU_MEMORY=1GiB\",\"CONVGPU_GPUS=+2\"]}}",
        "{\"process\":{\"env\":[\"CONVGPU_GPU_MEMORY=1GiB\",\"CONVGPU_GPUS=2\","
        "\"CONVGPU_GPU_DEVICE=1\"]}}",
        "{\"process\":{},\"annotations\":{\"com.convgpu.gpu-memory\":\"1GiB\","
        "\"com.convgpu.gpus\":2}}",
        "{\"annotations\":{\"com.convgpu.gpu-memory\":\"1GiB\"}}", /* no process section */
        /* GPU slots: a list that does not parse, a total that does not split, no memory. */
        "{\"process\":{\"env\":[\"CONVGPU_GPU_MEMORY=1GiB\",\"CONVGPU_K8S_GPUS=\"]}}",
        "{\"process\":{\"env\":[\"CONVGPU_GPU_MEMORY=1GiB\",\"CONVGPU_K8S_GPUS=0,0\"]}}",
        "{\"process\":{\"env\":[\"CONVGPU_GPU_MEMORY=1GiB\",\"CONVGPU_K8S_GPUS=0,\"]}}",
        "{\"process\":{\"env\":[\"CONVGPU_GPU_MEMORY=1GiB\",\"CONVGPU_K8S_GPUS=-1\"]}}",
        "{\"process\":{\"env\":[\"CONVGPU_GPU_MEMORY=1GiB\",\"CONVGPU_K8S_GPUS=1024\"]}}",
        "{\"process\":{\"env\":[\"CONVGPU_GPU_MEMORY=1GiB\",\"CONVGPU_K8S_GPUS= 1\"]}}",
        "{\"process\":{\"env\":[\"CONVGPU_GPU_MEMORY=1GiB\",\"CONVGPU_K8S_GPUS=1;2\"]}}",
        "{\"process\":{\"env\":[\"CONVGPU_GPU_MEMORY=3\",\"CONVGPU_K8S_GPUS=0,1\"]}}",
        "{\"process\":{\"env\":[\"CONVGPU_GPU_MEMORY=1GiB\",\"CONVGPU_K8S_GPUS=0,1\","
        "\"CONVGPU_GPU_COMPUTE=3\"]}}",
        "{\"process\":{\"env\":[\"CONVGPU_GPU_MEMORY=1GiB\",\"CONVGPU_K8S_GPUS=0,1\","
        "\"CONVGPU_GPU_COMPUTE=202\"]}}",
        "{\"process\":{\"env\":[\"CONVGPU_GPU_MEMORY=1GiB\",\"CONVGPU_K8S_GPUS=0,1\","
        "\"CONVGPU_GPUS=3\"]}}",
        "{\"process\":{\"env\":[\"CONVGPU_K8S_GPUS=0,1\",\"CONVGPU_GPU_COMPUTE=20\"]}}",
        "{\"process\":{\"env\":[\"CONVGPU_K8S_GPUS=0,1\"]}}",
        "{\"process\":{\"env\":\"CONVGPU_GPU_MEMORY=1GiB\"}}",
        "{\"process\":{},\"annotations\":{\"com.convgpu.gpu-memory\":5}}",
        "{\"process\":{},\"annotations\":[]}",
        "[]",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        c = cfg(bad[i]);
        err[0] = '\0';
        int rc = oci_spec_request(c, &r, err, sizeof err);
        if (rc == 0 || !err[0]) {
            fprintf(stderr, "FAIL request accepted: %s\n", bad[i]);
            failures++;
        }
        json_decref(c);
    }
    c = cfg("{\"annotations\":{\"com.convgpu.gpu-memory\":\"1GiB\"}}");
    oci_spec_request(c, &r, err, sizeof err);
    CHECK(strstr(err, "process") != NULL);
    json_decref(c);
}

/* The compute share and its mode: each from the environment, else its annotation; validated
 * like the size. */
static void test_compute_request(void)
{
    char err[512];
    struct oci_request r;
    json_t *c = cfg("{\"process\":{\"env\":[\"CONVGPU_GPU_MEMORY=1GiB\"]}}");
    CHECK(oci_spec_request(c, &r, err, sizeof err) == 0 && r.wanted && r.compute_pct == 0 &&
          !r.has_mode && r.compute_source == NULL);
    json_decref(c);
    c = cfg("{\"process\":{\"env\":[\"CONVGPU_GPU_MEMORY=1GiB\",\"CONVGPU_GPU_COMPUTE=30\","
            "\"CONVGPU_COMPUTE_MODE=hard\"]},\"annotations\":{\"com.convgpu.gpu-compute\":\"60\","
            "\"com.convgpu.compute-mode\":\"elastic\"}}");
    CHECK(oci_spec_request(c, &r, err, sizeof err) == 0 && r.compute_pct == 30 && r.has_mode &&
          r.compute_mode == CG_COMPUTE_HARD && STREQ(r.compute_source, OCI_ENV_COMPUTE));
    json_decref(c);
    c = cfg("{\"process\":{\"env\":[\"CONVGPU_GPU_COMPUTE=45\"]},\"annotations\":{"
            "\"com.convgpu.gpu-memory\":\"1GiB\",\"com.convgpu.compute-mode\":\"hard\"}}");
    CHECK(oci_spec_request(c, &r, err, sizeof err) == 0 && r.compute_pct == 45 && r.has_mode &&
          r.compute_mode == CG_COMPUTE_HARD);
    json_decref(c);
    c = cfg("{\"process\":{},\"annotations\":{\"com.nvidia.memory.limit\":\"1GiB\","
            "\"com.convgpu.gpu-compute\":\"100\"}}");
    CHECK(oci_spec_request(c, &r, err, sizeof err) == 0 && r.compute_pct == 100 && !r.has_mode &&
          STREQ(r.compute_source, OCI_ANN_COMPUTE));
    json_decref(c);
    const char *bad[] = {
        "{\"process\":{\"env\":[\"CONVGPU_GPU_MEMORY=1GiB\",\"CONVGPU_GPU_COMPUTE=0\"]}}",
        "{\"process\":{\"env\":[\"CONVGPU_GPU_MEMORY=1GiB\",\"CONVGPU_GPU_COMPUTE=101\"]}}",
        "{\"process\":{\"env\":[\"CONVGPU_GPU_MEMORY=1GiB\",\"CONVGPU_GPU_COMPUTE=-5\"]}}",
        "{\"process\":{\"env\":[\"CONVGPU_GPU_MEMORY=1GiB\",\"CONVGPU_GPU_COMPUTE=30.5\"]}}",
        "{\"process\":{\"env\":[\"CONVGPU_GPU_MEMORY=1GiB\",\"CONVGPU_GPU_COMPUTE=abc\"]}}",
        "{\"process\":{\"env\":[\"CONVGPU_GPU_MEMORY=1GiB\",\"CONVGPU_GPU_COMPUTE=\"]}}",
        "{\"process\":{\"env\":[\"CONVGPU_GPU_MEMORY=1GiB\",\"CONVGPU_GPU_COMPUTE=30\","
        "\"CONVGPU_COMPUTE_MODE=Hard\"]}}",
        "{\"process\":{\"env\":[\"CONVGPU_GPU_MEMORY=1GiB\",\"CONVGPU_COMPUTE_MODE=hard\"]}}",
        "{\"process\":{\"env\":[\"CONVGPU_GPU_COMPUTE=30\"]}}",
        "{\"process\":{},\"annotations\":{\"com.convgpu.compute-mode\":\"hard\"}}",
        "{\"process\":{},\"annotations\":{\"com.convgpu.gpu-memory\":\"1GiB\","
        "\"com.convgpu.gpu-compute\":30}}",
        "{\"process\":{},\"annotations\":{\"com.convgpu.gpu-memory\":\"1GiB\","
        "\"com.convgpu.compute-mode\":[]}}",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        c = cfg(bad[i]);
        err[0] = '\0';
        int rc = oci_spec_request(c, &r, err, sizeof err);
        if (rc == 0 || !err[0]) {
            fprintf(stderr, "FAIL compute request accepted: %s\n", bad[i]);
            failures++;
        }
        json_decref(c);
    }
}

static json_t *answer_env(bool emulated)
{
    json_t *e = json_pack("{s:s,s:s,s:s}", "LD_PRELOAD", "/opt/cg/lib/libconvgpu.so",
                          "CONVGPU_SOCKET", "/run/convgpu/containers/c1/container.sock",
                          "CUDA_VISIBLE_DEVICES", "GPU-1234");
    if (emulated) {
        json_object_set_new(e, "LD_LIBRARY_PATH", json_string("/opt/cg/lib/emu"));
        json_object_set_new(e, "CONVGPU_EMU_STATE", json_string("/run/convgpu/emu/state"));
        json_object_set_new(e, "CONVGPU_EMU_DEVICES", json_string("5GiB"));
    }
    return e;
}

static const char *env_of(json_t *c, const char *key)
{
    size_t i, k = strlen(key);
    json_t *v;
    const char *found = NULL;
    int count = 0;
    json_array_foreach(json_object_get(json_object_get(c, "process"), "env"), i, v) {
        const char *s = json_string_value(v);
        if (strncmp(s, key, k) == 0 && s[k] == '=') {
            found = s + k + 1;
            count++;
        }
    }
    return count == 1 ? found : (count ? "DUPLICATE" : NULL);
}

static json_t *mount_at(json_t *c, const char *dest, int *count)
{
    size_t i;
    json_t *m, *found = NULL;
    *count = 0;
    json_array_foreach(json_object_get(c, "mounts"), i, m) {
        if (STREQ(json_string_value(json_object_get(m, "destination")), dest)) {
            found = m;
            (*count)++;
        }
    }
    return found;
}

static void test_inject(void)
{
    char err[512];
    const char *hargs[] = {"--runtime-dir", "/run/convgpu", NULL};
    json_t *env = answer_env(true);
    struct oci_inject in = {.container_dir = "/run/convgpu/containers/c1",
                            .preload_file = "/run/convgpu/oci/c1/ld.so.preload",
                            .env = env, .hook_path = "/usr/bin/convgpu-runtime",
                            .hook_args = hargs, .nvidia = false, .hooks = true};
    json_t *c = cfg("{\"ociVersion\":\"1.0.2\",\"process\":{\"env\":[\"PATH=/bin\","
                    "\"LD_PRELOAD=/usr/lib/libmine.so\",\"LD_LIBRARY_PATH=/app/lib\"]},"
                    "\"mounts\":[{\"destination\":\"/proc\",\"type\":\"proc\",\"source\":\"proc\"}],"
                    "\"hooks\":{\"poststop\":[{\"path\":\"/usr/bin/other\"}]}}");
    CHECK(oci_spec_inject(c, &in, err, sizeof err) == 0);
    CHECK(STREQ(env_of(c, "LD_PRELOAD"), OCI_CG_LIB ":/usr/lib/libmine.so"));
    CHECK(STREQ(env_of(c, "LD_LIBRARY_PATH"), "/opt/cg/lib/emu:/app/lib"));
    CHECK(STREQ(env_of(c, "CONVGPU_SOCKET"), OCI_CG_SOCKET));
    CHECK(STREQ(env_of(c, "CUDA_VISIBLE_DEVICES"), "GPU-1234"));
    CHECK(STREQ(env_of(c, "CONVGPU_EMU_STATE"), OCI_CG_EMU_STATE));
    CHECK(STREQ(env_of(c, "PATH"), "/bin") && env_of(c, "NVIDIA_VISIBLE_DEVICES") == NULL);
    int n;
    json_t *m = mount_at(c, OCI_CG_DIR, &n);
    CHECK(n == 1 && STREQ(json_string_value(json_object_get(m, "source")),
                          "/run/convgpu/containers/c1"));
    CHECK(json_string_value(json_array_get(json_object_get(m, "options"), 1)) &&
          STREQ(json_string_value(json_array_get(json_object_get(m, "options"), 1)), "ro"));
    m = mount_at(c, OCI_CG_LIB, &n);
    CHECK(n == 1 && STREQ(json_string_value(json_object_get(m, "source")), "/opt/cg/lib/libconvgpu.so"));
    m = mount_at(c, OCI_CG_PRELOAD, &n);
    CHECK(n == 1 && STREQ(json_string_value(json_object_get(m, "source")),
                          "/run/convgpu/oci/c1/ld.so.preload"));
    m = mount_at(c, "/opt/cg/lib/emu", &n);
    CHECK(n == 1);
    m = mount_at(c, OCI_CG_EMU_STATE, &n);
    CHECK(n == 1 && STREQ(json_string_value(json_object_get(m, "source")), "/run/convgpu/emu/state") && STREQ(json_string_value(json_array_get(json_object_get(m, "options"), 1)), "rw"));
    CHECK(json_array_size(json_object_get(c, "mounts")) == 6);
    /* Nothing is mounted below the read-only OCI_CG_DIR: runc cannot create a mount point there
     * (the daemon on the default /run/convgpu has its emulator state at /run/convgpu/emu/state,
     * which used to be mounted at that same path and failed every emulated container). */
    size_t mi;
    json_t *mv;
    json_array_foreach(json_object_get(c, "mounts"), mi, mv) {
        const char *dst = json_string_value(json_object_get(mv, "destination"));
        CHECK(dst && (strcmp(dst, OCI_CG_DIR) == 0 ||
                      strncmp(dst, OCI_CG_DIR "/", strlen(OCI_CG_DIR) + 1) != 0));
    }
    json_t *hooks = json_object_get(c, "hooks");
    CHECK(json_array_size(json_object_get(hooks, "poststop")) == 2);
    json_t *cr = json_array_get(json_object_get(hooks, "createRuntime"), 0);
    json_t *args = json_object_get(cr, "args");
    CHECK(STREQ(json_string_value(json_object_get(cr, "path")), "/usr/bin/convgpu-runtime"));
    CHECK(json_array_size(args) == 5 && STREQ(json_string_value(json_array_get(args, 4)),
                                              "create-runtime"));
    CHECK(STREQ(json_string_value(json_array_get(args, 2)), "/run/convgpu"));

    /* A second injection (runc create again on the same bundle) changes nothing. */
    char *once = json_dumps(c, JSON_COMPACT);
    CHECK(oci_spec_inject(c, &in, err, sizeof err) == 0);
    char *twice = json_dumps(c, JSON_COMPACT);
    CHECK(once && twice && strcmp(once, twice) == 0);
    free(once);
    free(twice);

    /* Without hooks (the shim reports the init pid itself): a re-injection takes ours out and
     * leaves the bundle's own. */
    in.hooks = false;
    CHECK(oci_spec_inject(c, &in, err, sizeof err) == 0);
    hooks = json_object_get(c, "hooks");
    CHECK(json_array_size(json_object_get(hooks, "poststop")) == 1);
    CHECK(STREQ(json_string_value(json_object_get(json_array_get(json_object_get(hooks, "poststop"), 0),
                                                  "path")), "/usr/bin/other"));
    CHECK(json_array_size(json_object_get(hooks, "createRuntime")) == 0);
    CHECK(json_array_size(json_object_get(c, "mounts")) == 6);
    in.hooks = true;
    json_decref(c);
    json_decref(env);

    /* A real GPU: no emulator mounts, the toolkit is told the placed GPU. */
    env = answer_env(false);
    in.env = env;
    in.nvidia = true;
    c = cfg("{\"process\":{}}");
    CHECK(oci_spec_inject(c, &in, err, sizeof err) == 0);
    CHECK(STREQ(env_of(c, "NVIDIA_VISIBLE_DEVICES"), "GPU-1234"));
    CHECK(STREQ(env_of(c, "NVIDIA_DRIVER_CAPABILITIES"), "compute,utility"));
    CHECK(STREQ(env_of(c, "LD_PRELOAD"), OCI_CG_LIB) && env_of(c, "LD_LIBRARY_PATH") == NULL);
    CHECK(json_array_size(json_object_get(c, "mounts")) == 3);
    json_decref(c);

    /* Refusals. */
    c = cfg("{\"mounts\":[]}");
    CHECK(oci_spec_inject(c, &in, err, sizeof err) != 0 && strstr(err, "process"));
    json_decref(c);
    c = cfg("{\"process\":{},\"mounts\":{}}");
    CHECK(oci_spec_inject(c, &in, err, sizeof err) != 0 && strstr(err, "mounts"));
    json_decref(c);
    json_object_del(env, "LD_PRELOAD");
    c = cfg("{\"process\":{}}");
    CHECK(oci_spec_inject(c, &in, err, sizeof err) != 0 && strstr(err, "LD_PRELOAD"));
    json_decref(c);
    json_decref(env);
}

/* The shim removes only mounts it added itself, recognised by what they are: a bundle's
 * com.convgpu.mounts annotation (which older shims wrote, and a bundle can write) naming /proc,
 * /dev, /sys and the shim's own destinations makes it remove nothing of the bundle's; mounts
 * that look like ours but differ in shape, type, options or source are the bundle's and stay;
 * a previous registration's mounts (another id) are replaced. */
static void test_strip_only_ours(void)
{
    char err[512];
    const char *hargs[] = {"--runtime-dir", "/run/convgpu", NULL};
    json_t *env = answer_env(true);
    struct oci_inject in = {.container_dir = "/run/convgpu/containers/c1",
                            .preload_file = "/run/convgpu/oci/c1/ld.so.preload",
                            .env = env, .hook_path = "/usr/bin/convgpu-runtime",
                            .hook_args = hargs, .nvidia = false, .hooks = true};
    static const char *const own[] = {
        "{\"destination\":\"/proc\",\"type\":\"proc\",\"source\":\"proc\"}",
        "{\"destination\":\"/dev\",\"type\":\"tmpfs\",\"source\":\"tmpfs\",\"options\":[\"nosuid\"]}",
        "{\"destination\":\"/sys\",\"type\":\"sysfs\",\"source\":\"sysfs\",\"options\":[\"ro\"]}",
        /* our destinations, not our shape or not our sources */
        "{\"destination\":\"/run/convgpu\",\"type\":\"bind\",\"source\":\"/home/u/run\","
        "\"options\":[\"rbind\",\"ro\",\"nosuid\",\"nodev\"]}",
        "{\"destination\":\"/usr/lib/convgpu/libconvgpu.so\",\"type\":\"bind\","
        "\"source\":\"/opt/cg/lib/libconvgpu.so\",\"options\":[\"rbind\",\"ro\"]}",
        "{\"destination\":\"/etc/ld.so.preload\",\"type\":\"bind\","
        "\"source\":\"/run/convgpu/oci/c1/x/ld.so.preload\",\"options\":[\"rbind\",\"ro\",\"nosuid\",\"nodev\"]}",
        "{\"destination\":\"/run/convgpu\",\"type\":\"bind\","
        "\"source\":\"/run/convgpu/containers/..\",\"options\":[\"rbind\",\"ro\",\"nosuid\",\"nodev\"]}",
        "{\"destination\":\"/run/convgpu-emu/state\",\"type\":\"bind\","
        "\"source\":\"/run/convgpu/emu/state\",\"options\":[\"rbind\",\"ro\",\"nosuid\",\"nodev\"]}",
        "{\"destination\":\"/opt/cg/lib/emu\",\"type\":\"bind\",\"source\":\"/opt/cg/lib/emu\","
        "\"options\":[\"rbind\",\"ro\",\"nosuid\",\"nodev\"],\"uidMappings\":[]}",
        "{\"destination\":\"/data\",\"type\":\"bind\",\"source\":\"/data\","
        "\"options\":[\"rbind\",\"ro\",\"nosuid\",\"nodev\"]}",
    };
    size_t nown = sizeof own / sizeof own[0];
    char text[8192];
    size_t len = (size_t)snprintf(text, sizeof text, "{\"process\":{},\"mounts\":[");
    for (size_t i = 0; i < nown; i++)
        len += (size_t)snprintf(text + len, sizeof text - len, "%s%s", i ? "," : "", own[i]);
    /* ... and a previous registration of another id, which the shim replaces */
    len += (size_t)snprintf(text + len, sizeof text - len,
                            ",{\"destination\":\"/run/convgpu\",\"type\":\"bind\","
                            "\"source\":\"/run/convgpu/containers/c0\","
                            "\"options\":[\"rbind\",\"ro\",\"nosuid\",\"nodev\"]}"
                            ",{\"destination\":\"/etc/ld.so.preload\",\"type\":\"bind\","
                            "\"source\":\"/run/convgpu/oci/c0/ld.so.preload\","
                            "\"options\":[\"rbind\",\"ro\",\"nosuid\",\"nodev\"]}"
                            "],\"annotations\":{\"com.convgpu.mounts\":\"/proc\\n/dev\\n/sys\\n"
                            "/run/convgpu\\n/usr/lib/convgpu/libconvgpu.so\\n/etc/ld.so.preload\\n"
                            "/run/convgpu-emu/state\\n/opt/cg/lib/emu\\n/data\"}}");
    CHECK(len < sizeof text);
    json_t *c = cfg(text);
    CHECK(oci_spec_inject(c, &in, err, sizeof err) == 0);
    json_t *mounts = json_object_get(c, "mounts");
    CHECK(json_array_size(mounts) == nown + 5); /* ours: dir, lib, preload, emulator x2 */
    for (size_t i = 0; i < nown; i++) {
        json_t *want = json_loads(own[i], 0, NULL);
        if (!json_equal(json_array_get(mounts, i), want)) {
            fprintf(stderr, "FAIL: the bundle's mount %s was removed or changed\n", own[i]);
            failures++;
        }
        json_decref(want);
    }
    int n;
    json_t *m = mount_at(c, OCI_CG_PRELOAD, &n);
    CHECK(n == 2); /* the bundle's look-alike and ours, for c1; c0's is gone */
    size_t i;
    json_array_foreach(mounts, i, m) {
        const char *src = json_string_value(json_object_get(m, "source"));
        CHECK(src && strstr(src, "/c0") == NULL);
    }
    /* The annotation is the bundle's: left as it was, and read by nobody. */
    CHECK(STREQ(json_string_value(json_object_get(json_object_get(c, "annotations"),
                                                  "com.convgpu.mounts")),
                "/proc\n/dev\n/sys\n/run/convgpu\n/usr/lib/convgpu/libconvgpu.so\n"
                "/etc/ld.so.preload\n/run/convgpu-emu/state\n/opt/cg/lib/emu\n/data"));
    /* Rewriting again keeps everything and adds ours once. */
    char *once = json_dumps(c, JSON_COMPACT);
    CHECK(oci_spec_inject(c, &in, err, sizeof err) == 0);
    char *twice = json_dumps(c, JSON_COMPACT);
    CHECK(once && twice && strcmp(once, twice) == 0);
    free(once);
    free(twice);
    json_decref(c);

    /* No annotation at all (a bundle rewritten by this shim): ours are still found and replaced. */
    c = cfg("{\"process\":{}}");
    CHECK(oci_spec_inject(c, &in, err, sizeof err) == 0);
    json_object_del(c, "annotations");
    CHECK(oci_spec_inject(c, &in, err, sizeof err) == 0);
    CHECK(json_array_size(json_object_get(c, "mounts")) == 5);
    json_decref(c);
    json_decref(env);
}

static void test_preload(void)
{
    char *t = oci_preload_text(NULL);
    CHECK(STREQ(t, OCI_CG_LIB "\n"));
    free(t);
    t = oci_preload_text("/lib/a.so " OCI_CG_LIB "\n/lib/b.so\n");
    CHECK(STREQ(t, OCI_CG_LIB "\n/lib/a.so\n/lib/b.so\n"));
    free(t);
}

static void write_text(const char *path, const char *text, mode_t mode)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode);
    if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text))
        failures++;
    if (fd >= 0)
        close(fd);
    chmod(path, mode);
}

static void test_bundle(void)
{
    char dir[] = "/tmp/convgpu-spec.XXXXXX", path[256], err[512];
    if (!mkdtemp(dir)) {
        failures++;
        return;
    }
    snprintf(path, sizeof path, "%s/config.json", dir);
    bool pretty;
    CHECK(oci_bundle_load(dir, &pretty, err, sizeof err) == NULL && strstr(err, "config.json"));
    write_text(path, "{\"process\": {\"env\": [\"A=1\"]", 0600);
    CHECK(oci_bundle_load(dir, &pretty, err, sizeof err) == NULL && strstr(err, "not valid JSON"));
    write_text(path, "[1]", 0600);
    CHECK(oci_bundle_load(dir, &pretty, err, sizeof err) == NULL && strstr(err, "not a JSON object"));
    write_text(path, "{\n\t\"process\": {\n\t\t\"env\": [\"A=1\"]\n\t}\n}\n", 0600);
    json_t *c = oci_bundle_load(dir, &pretty, err, sizeof err);
    CHECK(c && pretty);
    json_object_set_new(c, "x", json_integer(1));
    CHECK(oci_bundle_save(dir, c, pretty, err, sizeof err) == 0);
    struct stat st;
    CHECK(stat(path, &st) == 0 && (st.st_mode & 0777) == 0600);
    char tmp[300];
    snprintf(tmp, sizeof tmp, "%s.convgpu-tmp", path);
    CHECK(access(tmp, F_OK) != 0);
    json_decref(c);
    c = oci_bundle_load(dir, &pretty, err, sizeof err);
    CHECK(c && json_integer_value(json_object_get(c, "x")) == 1);
    json_decref(c);

    /* The image's ld.so.preload is read inside the root, never through a symlink, and only
     * when it is a small regular file: anything else is refused before registration. */
    char p2[300];
    snprintf(p2, sizeof p2, "%s/rootfs/etc", dir);
    snprintf(tmp, sizeof tmp, "%s/rootfs", dir);
    mkdir(tmp, 0755);
    mkdir(p2, 0755);
    snprintf(p2, sizeof p2, "%s/rootfs/etc/ld.so.preload", dir);
    write_text(path, "{\"root\":{\"path\":\"rootfs\"}}", 0644);
    c = oci_bundle_load(dir, &pretty, err, sizeof err);
    char *t = (char *)"x";
    CHECK(oci_bundle_image_preload(dir, c, &t, err, sizeof err) == 0 && t == NULL);
    write_text(p2, "/lib/x.so\n", 0644);
    CHECK(oci_bundle_image_preload(dir, c, &t, err, sizeof err) == 0 && STREQ(t, "/lib/x.so\n"));
    free(t);
    unlink(p2);
    char secret[300];
    snprintf(secret, sizeof secret, "%s/secret", dir);
    write_text(secret, "/host/secret.so\n", 0644);
    if (symlink(secret, p2) == 0) {
        CHECK(oci_bundle_image_preload(dir, c, &t, err, sizeof err) == -1 && t == NULL);
        unlink(p2);
    }
    CHECK(mkfifo(p2, 0644) == 0); /* an open without O_NONBLOCK would wait for a writer */
    CHECK(oci_bundle_image_preload(dir, c, &t, err, sizeof err) == -1 && strstr(err, "FIFO"));
    unlink(p2);
    CHECK(mkdir(p2, 0755) == 0);
    CHECK(oci_bundle_image_preload(dir, c, &t, err, sizeof err) == -1 &&
          strstr(err, "directory"));
    rmdir(p2);
    write_text(p2, "", 0644);
    CHECK(truncate(p2, OCI_IMAGE_PRELOAD_MAX) == 0);
    CHECK(oci_bundle_image_preload(dir, c, &t, err, sizeof err) == -1 && strstr(err, "bytes"));
    unlink(p2);
    json_decref(c);
    unlink(secret);
    snprintf(p2, sizeof p2, "%s/rootfs/etc", dir);
    rmdir(p2);
    rmdir(tmp);
    unlink(path);
    rmdir(dir);
}

/* Ids from runc's arguments or a hook's state JSON never lead out of <runtime-dir>/oci. */
static void test_state_path(void)
{
    char buf[256];
    CHECK(oci_state_path("abc", NULL, buf, sizeof buf) != NULL && strstr(buf, "/oci/abc") != NULL);
    CHECK(oci_state_path("abc", "ld.so.preload", buf, sizeof buf) != NULL);
    const char *bad[] = {"", ".", "..", "../x", "a/b", "/abs", "x/..", NULL};
    for (const char **b = bad; *b; b++)
        CHECK(oci_state_path(*b, "ld.so.preload", buf, sizeof buf) == NULL);
    CHECK(oci_state_path(NULL, NULL, buf, sizeof buf) == NULL);
    CHECK(oci_state_path("abc", NULL, buf, 4) == NULL); /* too long for the buffer */
}

/* Exclusive mode (a whole GPU, alone or with a limit) and the profile's key: the image from
 * our annotation, else containerd CRI's, and the command. */
static void test_exclusive_request(void)
{
    char err[512];
    struct oci_request r;
    json_t *c = cfg("{\"process\":{\"args\":[\"/usr/bin/train\",\"-x\"],"
                    "\"env\":[\"CONVGPU_EXCLUSIVE=yes\"]},"
                    "\"annotations\":{\"io.kubernetes.cri.image-name\":\"docker.io/lib/t:1\"}}");
    CHECK(oci_spec_request(c, &r, err, sizeof err) == 0 && r.wanted && r.exclusive && r.bytes == 0);
    CHECK(STREQ(r.source, OCI_ENV_EXCLUSIVE) && STREQ(r.image, "docker.io/lib/t:1") &&
          STREQ(r.command, "/usr/bin/train"));
    json_decref(c);
    c = cfg("{\"process\":{\"env\":[\"CONVGPU_EXCLUSIVE=0\",\"CONVGPU_GPU_MEMORY=1GiB\"]},"
            "\"annotations\":{\"com.convgpu.exclusive\":\"true\",\"com.convgpu.image\":\"ours\","
            "\"io.kubernetes.cri.image-name\":\"cri\"}}");
    CHECK(oci_spec_request(c, &r, err, sizeof err) == 0 && r.wanted && !r.exclusive &&
          r.bytes == (1ull << 30) && STREQ(r.image, "ours") && r.command == NULL);
    json_decref(c);
    c = cfg("{\"process\":{},\"annotations\":{\"com.convgpu.exclusive\":\"1\","
            "\"com.convgpu.gpu-memory\":\"512MiB\"}}");
    CHECK(oci_spec_request(c, &r, err, sizeof err) == 0 && r.exclusive && r.bytes == (512u << 20));
    json_decref(c);
    c = cfg("{\"process\":{\"env\":[\"CONVGPU_EXCLUSIVE=no\"]}}");
    CHECK(oci_spec_request(c, &r, err, sizeof err) == 0 && !r.wanted);
    json_decref(c);
    c = cfg("{\"process\":{},\"annotations\":{\"com.convgpu.exclusive\":\"maybe\"}}");
    CHECK(oci_spec_request(c, &r, err, sizeof err) == -1 && strstr(err, "com.convgpu.exclusive"));
    json_decref(c);
    c = cfg("{\"process\":{},\"annotations\":{\"com.convgpu.exclusive\":\"yes\","
            "\"com.convgpu.image\":5}}");
    CHECK(oci_spec_request(c, &r, err, sizeof err) == -1);
    json_decref(c);
}

int main(void)
{
    test_state_path();
    test_args();
    test_request();
    test_compute_request();
    test_exclusive_request();
    test_inject();
    test_strip_only_ours();
    test_preload();
    test_bundle();
    if (failures) {
        fprintf(stderr, "%d failure(s)\n", failures);
        return 1;
    }
    printf("containers.spec: all passed\n");
    return 0;
}
