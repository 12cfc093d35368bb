/* spec.c — reading a container's GPU-memory request (limit, compute share) from its OCI
 * configuration and wiring the registered container into it. Every edit is undoable by the
 * next one: the mounts the shim adds are recognised by what they are (destination, source,
 * exact shape; see our_mount) and its hooks by their arguments, so rewriting an already
 * rewritten configuration gives the same result as rewriting the original. Nothing the bundle
 * writes (an annotation, a mount of its own) can make the shim remove a mount it did not add. */
#include "spec.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "container_options.h"
#include "size.h"

#include <stdarg.h>

__attribute__((format(printf, 3, 4))) static int fail(char *err, size_t errlen, const char *fmt,
                                                      ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return -1;
}

/* The last value of KEY in an OCI env array ("KEY=value" strings), or NULL. */
static const char *env_get(json_t *env, const char *key)
{
    size_t klen = strlen(key), i;
    const char *found = NULL;
    json_t *v;
    json_array_foreach(env, i, v) {
        const char *s = json_string_value(v);
        if (s && strncmp(s, key, klen) == 0 && s[klen] == '=')
            found = s + klen + 1;
    }
    return found;
}

/* Sets KEY=value: the first entry of KEY is replaced, later duplicates are dropped. */
static int env_set(json_t *env, const char *key, const char *value)
{
    size_t klen = strlen(key), n = klen + strlen(value) + 2;
    char *kv = malloc(n);
    if (!kv)
        return -1;
    snprintf(kv, n, "%s=%s", key, value);
    bool done = false;
    for (size_t i = 0; i < json_array_size(env);) {
        const char *s = json_string_value(json_array_get(env, i));
        if (s && strncmp(s, key, klen) == 0 && s[klen] == '=') {
            if (!done) {
                json_array_set_new(env, i++, json_string(kv));
                done = true;
            } else {
                json_array_remove(env, i);
            }
            continue;
        }
        i++;
    }
    int rc = done ? 0 : json_array_append_new(env, json_string(kv));
    free(kv);
    return rc;
}

/* "first:rest" where rest is old without the components of first (old splits on ':' and ' '). */
static char *path_prepend(const char *first, const char *old)
{
    size_t n = strlen(first) + (old ? strlen(old) : 0) + 2;
    char *out = malloc(n), *copy = old ? strdup(old) : NULL;
    if (!out || (old && !copy)) {
        free(out);
        free(copy);
        return NULL;
    }
    snprintf(out, n, "%s", first);
    char *save = NULL;
    for (char *t = copy ? strtok_r(copy, ": ", &save) : NULL; t; t = strtok_r(NULL, ": ", &save)) {
        bool dup = false;
        char *fc = strdup(first), *fs = NULL;
        for (char *f = fc ? strtok_r(fc, ":", &fs) : NULL; f; f = strtok_r(NULL, ":", &fs))
            dup = dup || strcmp(f, t) == 0;
        free(fc);
        if (!dup) {
            strcat(out, ":");
            strcat(out, t);
        }
    }
    free(copy);
    return out;
}

static int parse_device(const char *text, long *device, char *err, size_t errlen)
{
    char *end;
    errno = 0;
    long d = strtol(text, &end, 10);
    if (errno || end == text || *end || d < 0 || d > 1024)
        return fail(err, errlen, "bad GPU index '%s': want a number such as 0", text);
    *device = d;
    return 0;
}

/* CONVGPU_K8S_GPUS: distinct GPU indexes, comma-separated ("0,2"), 1 to OCI_MAX_GPUS of them. */
static int parse_k8s_gpus(const char *text, struct oci_request *req, char *err, size_t errlen)
{
    const char *p = text;
    req->ndevices = 0;
    for (;;) {
        char *end;
        errno = 0;
        long d = *p >= '0' && *p <= '9' ? strtol(p, &end, 10) : -1;
        if (d < 0 || errno || end == p || d > 1023 || (*end != ',' && *end != '\0') ||
            req->ndevices == OCI_MAX_GPUS)
            return fail(err, errlen, "bad %s '%.80s': want distinct GPU indexes such as 0,2",
                        OCI_ENV_K8S_GPUS, text);
        for (unsigned i = 0; i < req->ndevices; i++)
            if (req->devices[i] == (unsigned)d)
                return fail(err, errlen, "%s '%.80s' names GPU %ld twice", OCI_ENV_K8S_GPUS,
                            text, d);
        req->devices[req->ndevices++] = (unsigned)d;
        if (*end == '\0')
            return 0;
        p = end + 1;
    }
}

/* A multi-GPU pod's compute units: the total over its n GPUs, a whole multiple of n whose
 * part is a share of 1 to 100%. */
static int parse_k8s_compute(const char *text, unsigned n, unsigned *per_gpu, char *err,
                             size_t errlen)
{
    char *end;
    errno = 0;
    long v = *text >= '0' && *text <= '9' ? strtol(text, &end, 10) : -1;
    if (v < 1 || errno || *end || v > 100l * n || v % n != 0)
        return fail(err, errlen, "compute units '%.32s' in %s do not split evenly over the %u "
                                 "GPUs of %s: ask for a multiple of %u, at most %u",
                    text, OCI_ENV_COMPUTE, n, OCI_ENV_K8S_GPUS, n, 100 * n);
    *per_gpu = (unsigned)(v / n);
    return 0;
}

static const char *annotation(json_t *config, const char *key, bool *bad)
{
    json_t *v = json_object_get(json_object_get(config, "annotations"), key);
    if (v && !json_is_string(v))
        *bad = true;
    return json_string_value(v);
}

int oci_spec_request(json_t *config, struct oci_request *req, char *err, size_t errlen)
{
    memset(req, 0, sizeof *req);
    req->device = -1;
    if (!json_is_object(config))
        return fail(err, errlen, "%s", "config.json is not a JSON object");
    json_t *ann = json_object_get(config, "annotations");
    if (ann && !json_is_object(ann))
        return fail(err, errlen, "%s", "config.json: \"annotations\" is not an object");
    json_t *process = json_object_get(config, "process");
    json_t *env = json_object_get(process, "env");
    if (env && !json_is_array(env))
        return fail(err, errlen, "%s", "config.json: \"process.env\" is not an array");

    /* A device plugin's token here means containerd runs the shim without Kubernetes mode: the
     * pod's own variables would be read beside it, so the container does not start. */
    const char *const tokens[] = {OCI_ENV_ALLOCATION, OCI_ENV_ALLOCATION_COMPUTE,
                                  OCI_ENV_ALLOCATION_GPUS};
    for (size_t i = 0; env && i < 3; i++)
        if (env_get(env, tokens[i]))
            return fail(err, errlen, "%s is the device plugin's, but the runtime is not in "
                                     "Kubernetes mode: set %s=kubernetes in containerd's "
                                     "environment (packaging/k8s/containerd-convgpu.conf)",
                        tokens[i], OCI_SHIM_MODE_ENV);

    bool bad = false;
    const char *text = NULL, *dev = NULL;
    const char *k8s_gpus = env ? env_get(env, OCI_ENV_K8S_GPUS) : NULL;
    if (k8s_gpus && parse_k8s_gpus(k8s_gpus, req, err, errlen) != 0)
        return -1;
    if (env && (text = env_get(env, OCI_ENV_MEMORY)))
        req->source = OCI_ENV_MEMORY;
    else if ((text = annotation(config, OCI_ANN_MEMORY, &bad)))
        req->source = OCI_ANN_MEMORY;
    else if (!bad && (text = annotation(config, OCI_ANN_PAPER, &bad)))
        req->source = OCI_ANN_PAPER;
    if (bad)
        return fail(err, errlen, "%s", "config.json: an annotation is not a string");
    /* The compute share and its mode: the environment first, then the annotations. */
    const char *share = NULL, *mode = NULL, *mode_source = NULL;
    if (env && (share = env_get(env, OCI_ENV_COMPUTE)))
        req->compute_source = OCI_ENV_COMPUTE;
    else if ((share = annotation(config, OCI_ANN_COMPUTE, &bad)))
        req->compute_source = OCI_ANN_COMPUTE;
    if (env && (mode = env_get(env, OCI_ENV_COMPUTE_MODE)))
        mode_source = OCI_ENV_COMPUTE_MODE;
    else if ((mode = annotation(config, OCI_ANN_COMPUTE_MODE, &bad)))
        mode_source = OCI_ANN_COMPUTE_MODE;
    const char *excl = NULL, *excl_source = OCI_ENV_EXCLUSIVE;
    if (!(env && (excl = env_get(env, OCI_ENV_EXCLUSIVE)))) {
        excl = annotation(config, OCI_ANN_EXCLUSIVE, &bad);
        excl_source = OCI_ANN_EXCLUSIVE;
    }
    if (bad)
        return fail(err, errlen, "%s", "config.json: an annotation is not a string");
    if (excl && (strcmp(excl, "yes") == 0 || strcmp(excl, "true") == 0 || strcmp(excl, "1") == 0))
        req->exclusive = true;
    else if (excl && strcmp(excl, "no") != 0 && strcmp(excl, "false") != 0 && strcmp(excl, "0") != 0)
        return fail(err, errlen, "bad %s '%s': yes or no", excl_source, excl);
    if (k8s_gpus && !text)
        return fail(err, errlen, "the container has GPU slots (%s, convgpu.io/gpu) but no GPU "
                                 "memory: ask for convgpu.io/gpu-memory units as well",
                    OCI_ENV_K8S_GPUS);
    if (!text && !req->exclusive && (share || mode))
        return fail(err, errlen, "the container asks for a compute share (%s) but no GPU memory: "
                                 "give " OCI_ENV_MEMORY " or the annotation " OCI_ANN_MEMORY
                                 " as well",
                    share ? req->compute_source : mode_source);
    if (!text && !req->exclusive)
        return 0; /* asks for nothing */
    if (!text)
        req->source = excl_source;
    if (!json_is_object(process))
        return fail(err, errlen, "the container asks for GPU memory (%s) but its config.json has "
                                 "no \"process\" section to run it with",
                    req->source);
    req->image = annotation(config, OCI_ANN_IMAGE, &bad);
    if (!req->image)
        req->image = annotation(config, OCI_ANN_CRI_IMAGE, &bad);
    req->command = json_string_value(json_array_get(json_object_get(process, "args"), 0));
    if (bad)
        return fail(err, errlen, "%s", "config.json: an annotation is not a string");
    /* The container's socket is made for the user its processes run as (without a user
     * namespace, the uid in config.json is the host uid). */
    json_t *user = json_object_get(process, "user");
    json_t *uid = json_object_get(user, "uid"), *gid = json_object_get(user, "gid");
    if (json_is_integer(uid) && json_is_integer(gid) && json_integer_value(uid) >= 0 &&
        json_integer_value(uid) <= 0xfffffffe && json_integer_value(gid) >= 0 &&
        json_integer_value(gid) <= 0xfffffffe) {
        req->has_user = true;
        req->uid = (uint32_t)json_integer_value(uid);
        req->gid = (uint32_t)json_integer_value(gid);
    }
    const char *why = NULL;
    if (text && (cg_parse_size(text, &req->bytes, &why) != 0 || req->bytes == 0)) {
        snprintf(err, errlen, "bad GPU-memory size '%s' in %s: %s (use e.g. 512MiB, 1GiB or "
                              "a number of bytes)",
                 text, req->source, why ? why : "must be greater than zero");
        return -1;
    }
    if (k8s_gpus) {
        /* kubelet counted the pod's units as totals over its GPUs: each GPU gets its part. */
        unsigned n = req->ndevices;
        if (req->bytes % n != 0 || req->bytes / n == 0)
            return fail(err, errlen, "GPU memory %s in %s does not split evenly over the %u GPUs "
                                     "of %s: ask for a multiple of %u memory units",
                        text, req->source, n, OCI_ENV_K8S_GPUS, n);
        req->bytes /= n;
        if (share && parse_k8s_compute(share, n, &req->compute_pct, err, errlen) != 0)
            return -1;
    } else if (share && !cg_compute_pct_parse(share, &req->compute_pct))
        return fail(err, errlen, "bad compute share '%s' in %s: a whole percentage from 1 to 100",
                    share, req->compute_source);
    if (mode && !cg_compute_mode_parse(mode, &req->compute_mode))
        return fail(err, errlen, "bad compute mode '%s' in %s: hard or elastic", mode,
                    mode_source);
    if (mode && !share)
        return fail(err, errlen, "a compute mode (%s) needs a share: give %s or the annotation %s",
                    mode_source, OCI_ENV_COMPUTE, OCI_ANN_COMPUTE);
    req->has_mode = mode != NULL;
    /* With slots, the memory units' GPU is kubelet's count, not where the container runs. */
    dev = env && !k8s_gpus ? env_get(env, OCI_ENV_DEVICE) : NULL;
    if (!dev && !k8s_gpus)
        dev = annotation(config, OCI_ANN_DEVICE, &bad);
    if (bad)
        return fail(err, errlen, "%s", "config.json: an annotation is not a string");
    if (dev && parse_device(dev, &req->device, err, errlen) != 0)
        return -1;
    const char *gpus = env ? env_get(env, OCI_ENV_GPUS) : NULL, *gpus_source = OCI_ENV_GPUS;
    if (!gpus) {
        gpus = annotation(config, OCI_ANN_GPUS, &bad);
        gpus_source = OCI_ANN_GPUS;
    }
    if (bad)
        return fail(err, errlen, "%s", "config.json: an annotation is not a string");
    if (gpus) {
        char *end;
        errno = 0;
        long n = strtol(gpus, &end, 10);
        if (errno || end == gpus || *end || gpus[0] == '+' || gpus[0] == ' ' || n < 1 || n > 64)
            return fail(err, errlen, "bad number of GPUs '%s' in %s: 1 to 64", gpus,
                        gpus_source);
        if (n > 1 && req->device >= 0)
            return fail(err, errlen, "%s names one GPU but %s asks for %ld", OCI_ENV_DEVICE,
                        gpus_source, n);
        if (k8s_gpus && (unsigned)n != req->ndevices)
            return fail(err, errlen, "%s asks for %ld GPUs but %s names %u", gpus_source, n,
                        OCI_ENV_K8S_GPUS, req->ndevices);
        req->gpus = (unsigned)n;
    }
    if (k8s_gpus)
        req->gpus = req->ndevices;
    /* The rows of the option table (container_options.h) no rule above reads: each from the
     * environment, else its annotation, parsed by the table's one parser. */
    static const enum cgc_opt_id plain[] = {CGC_OPT_PRIORITY, CGC_OPT_NO_SWAP};
    struct cgc_option_values v = {0};
    for (size_t i = 0; i < sizeof plain / sizeof plain[0]; i++) {
        const struct cgc_option *o = &cgc_options[plain[i]];
        const char *value = env ? env_get(env, o->env) : NULL, *where = o->env;
        if (!value) {
            value = annotation(config, o->annotation, &bad);
            where = o->annotation;
        }
        if (bad)
            return fail(err, errlen, "%s", "config.json: an annotation is not a string");
        if (value && cgc_option_apply(o, where, value, &v, err, errlen) != 0)
            return -1;
    }
    req->has_priority = v.spec.has_priority;
    req->priority = v.spec.priority;
    req->no_swap = v.spec.no_swap;
    req->wanted = true;
    return 0;
}

/* A tenant name (1-32 of [A-Za-z0-9_.-], not starting with . or -) for a namespace (a DNS
 * label of up to 63): itself when it fits, else its first 23 characters, '-' and a hash of the
 * whole, so two long namespaces stay two tenants. */
static void tenant_of_namespace(const char *ns, char *out, size_t len)
{
    size_t n = strlen(ns);
    bool ok = n > 0 && ns[0] != '.' && ns[0] != '-';
    for (size_t i = 0; ok && i < n; i++)
        ok = (ns[i] >= 'a' && ns[i] <= 'z') || (ns[i] >= 'A' && ns[i] <= 'Z') ||
             (ns[i] >= '0' && ns[i] <= '9') || ns[i] == '-' || ns[i] == '_' || ns[i] == '.';
    if (!ok) {
        out[0] = '\0';
        return;
    }
    if (n <= 32) {
        snprintf(out, len, "%s", ns);
        return;
    }
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)ns[i]) * 16777619u;
    snprintf(out, len, "%.23s-%08x", ns, h);
}

static bool token_valid(const char *t)
{
    size_t n = 0;
    for (; t[n]; n++)
        if (!((t[n] >= '0' && t[n] <= '9') || (t[n] >= 'a' && t[n] <= 'f')))
            return false;
    return n == 32;
}

int oci_spec_k8s_request(json_t *config, struct oci_request *req, char *err, size_t errlen)
{
    memset(req, 0, sizeof *req);
    req->device = -1;
    if (!json_is_object(config))
        return fail(err, errlen, "%s", "config.json is not a JSON object");
    json_t *process = json_object_get(config, "process");
    json_t *env = json_object_get(process, "env");
    if (env && !json_is_array(env))
        return fail(err, errlen, "%s", "config.json: \"process.env\" is not an array");
    static const char *const keys[] = {OCI_ENV_ALLOCATION, OCI_ENV_ALLOCATION_COMPUTE,
                                       OCI_ENV_ALLOCATION_GPUS};
    for (size_t k = 0; k < 3; k++) {
        size_t klen = strlen(keys[k]), i, seen = 0;
        const char *value = NULL;
        json_t *v;
        json_array_foreach(env, i, v) {
            const char *e = json_string_value(v);
            if (e && strncmp(e, keys[k], klen) == 0 && e[klen] == '=') {
                seen++;
                value = e + klen + 1;
            }
        }
        if (seen > 1)
            return fail(err, errlen, "%s is set %zu times: the device plugin sets it once, so "
                                     "the container's own environment set it too; refused",
                        keys[k], seen);
        if (value && !token_valid(value))
            return fail(err, errlen, "%s is not an allocation token of the device plugin",
                        keys[k]);
        if (value)
            req->allocs[req->nallocs++] = value;
    }
    if (!req->nallocs)
        return 0; /* no convgpu resource: nothing at all */
    if (!json_is_object(process))
        return fail(err, errlen, "%s", "config.json has no \"process\" section");
    bool bad = false;
    req->pod = annotation(config, OCI_ANN_CRI_SANDBOX_UID, &bad);
    if (!req->pod || !*req->pod)
        req->pod = annotation(config, OCI_ANN_CRI_SANDBOX_ID, &bad);
    const char *ns = annotation(config, OCI_ANN_CRI_NAMESPACE, &bad);
    req->image = annotation(config, OCI_ANN_CRI_IMAGE, &bad);
    if (bad)
        return fail(err, errlen, "%s", "config.json: an annotation is not a string");
    if (ns)
        tenant_of_namespace(ns, req->tenant, sizeof req->tenant);
    req->command = json_string_value(json_array_get(json_object_get(process, "args"), 0));
    json_t *user = json_object_get(process, "user");
    json_t *uid = json_object_get(user, "uid"), *gid = json_object_get(user, "gid");
    if (json_is_integer(uid) && json_is_integer(gid) && json_integer_value(uid) >= 0 &&
        json_integer_value(uid) <= 0xfffffffe && json_integer_value(gid) >= 0 &&
        json_integer_value(gid) <= 0xfffffffe) {
        req->has_user = true; /* its socket's owner only: limits and tenant are not its */
        req->uid = (uint32_t)json_integer_value(uid);
        req->gid = (uint32_t)json_integer_value(gid);
    }
    req->source = OCI_ENV_ALLOCATION;
    req->wanted = true;
    return 0;
}

static json_t *bind_mount(const char *dest, const char *source, bool writable)
{
    return json_pack("{s:s,s:s,s:s,s:[s,s,s,s]}", "destination", dest, "type", "bind", "source",
                     source, "options", "rbind", writable ? "rw" : "ro", "nosuid", "nodev");
}

static bool our_hook(json_t *hook)
{
    const char *path = json_string_value(json_object_get(hook, "path"));
    size_t n = path ? strlen(path) : 0;
    if (n < 16 || strcmp(path + n - 16, "/convgpu-runtime") != 0)
        return false;
    size_t i;
    json_t *a;
    json_array_foreach(json_object_get(hook, "args"), i, a) {
        if (json_is_string(a) && strcmp(json_string_value(a), "hook") == 0)
            return true;
    }
    return false;
}

static json_t *child(json_t *parent, const char *key, bool array, char *err, size_t errlen)
{
    json_t *v = json_object_get(parent, key);
    if (!v) {
        v = array ? json_array() : json_object();
        if (!v || json_object_set_new(parent, key, v) != 0) {
            fail(err, errlen, "%s", "out of memory");
            return NULL;
        }
    }
    if (array ? !json_is_array(v) : !json_is_object(v)) {
        fail(err, errlen, array ? "config.json: \"%s\" is not an array"
                                : "config.json: \"%s\" is not an object", key);
        return NULL;
    }
    return v;
}

/* Whether m has exactly the shape bind_mount() gives: four keys, a bind of `source` with
 * "rbind", "ro" or "rw" (as `writable` says), "nosuid", "nodev". Returns its source, or NULL. */
static const char *our_bind(json_t *m, const char *dest, bool writable)
{
    static const char *const opts[] = {"rbind", NULL, "nosuid", "nodev"};
    json_t *o = json_object_get(m, "options");
    const char *d = json_string_value(json_object_get(m, "destination"));
    const char *src = json_string_value(json_object_get(m, "source"));
    const char *type = json_string_value(json_object_get(m, "type"));
    if (!json_is_object(m) || json_object_size(m) != 4 || !d || strcmp(d, dest) != 0 || !src ||
        !type || strcmp(type, "bind") != 0 || json_array_size(o) != 4)
        return NULL;
    for (size_t i = 0; i < 4; i++) {
        const char *want = opts[i] ? opts[i] : writable ? "rw" : "ro";
        const char *got = json_string_value(json_array_get(o, i));
        if (!got || strcmp(got, want) != 0)
            return NULL;
    }
    return src;
}

/* Whether path is `<prefix>/<one component><tail>` (the component not "", "." or ".."): the
 * per-container files of a registration, whatever its id. */
static bool one_below(const char *path, const char *prefix, size_t plen, const char *tail)
{
    if (plen == 0 || strncmp(path, prefix, plen) != 0 || path[plen] != '/')
        return false;
    const char *comp = path + plen + 1, *end = strchr(comp, '/');
    size_t clen = end ? (size_t)(end - comp) : strlen(comp);
    if (clen == 0 || (clen == 1 && comp[0] == '.') || (clen == 2 && strncmp(comp, "..", 2) == 0))
        return false;
    return strcmp(comp + clen, tail) == 0;
}

/* Whether dir is one of the absolute entries of a ':'-separated list. */
static bool in_path_list(const char *list, const char *dir)
{
    size_t dl = strlen(dir);
    for (const char *p = list; p && *p;) {
        const char *colon = strchr(p, ':');
        size_t l = colon ? (size_t)(colon - p) : strlen(p);
        if (l == dl && p[0] == '/' && strncmp(p, dir, l) == 0)
            return true;
        p += l + (colon ? 1 : 0);
    }
    return false;
}

/* Whether mount m is one this shim adds: recognised by what it is (destination, source under
 * the daemon's runtime directory or the interposer's paths, and bind_mount's exact shape),
 * never by anything the bundle can write. A bundle's own mount of any other shape or source
 * (/proc, its own /run/convgpu) is never ours, whatever its annotations say. */
static bool our_mount(json_t *m, const struct oci_inject *in)
{
    const char *lib = json_string_value(json_object_get(in->env, "LD_PRELOAD"));
    const char *libpath = json_string_value(json_object_get(in->env, "LD_LIBRARY_PATH"));
    const char *state = json_string_value(json_object_get(in->env, "CONVGPU_EMU_STATE"));
    /* The runtime directory: container_dir is <runtime-dir>/containers/<id>. */
    const char *rt = in->container_dir;
    size_t rtlen = 0;
    const char *slash = rt ? strrchr(rt, '/') : NULL;
    if (slash && (size_t)(slash - rt) > 11 && strncmp(slash - 11, "/containers", 11) == 0)
        rtlen = (size_t)(slash - rt) - 11;
    char containers[4096], oci[4096];
    bool have_rt = rtlen > 0 && rtlen < sizeof containers - 16;
    if (have_rt) {
        snprintf(containers, sizeof containers, "%.*s/containers", (int)rtlen, rt);
        snprintf(oci, sizeof oci, "%.*s/oci", (int)rtlen, rt);
    }
    const char *src;
    if ((src = our_bind(m, OCI_CG_DIR, false)))
        return (rt && strcmp(src, rt) == 0) ||
               (have_rt && one_below(src, containers, strlen(containers), ""));
    if ((src = our_bind(m, OCI_CG_LIB, false)))
        return lib && strcmp(src, lib) == 0;
    if ((src = our_bind(m, OCI_CG_PRELOAD, false)))
        return (in->preload_file && strcmp(src, in->preload_file) == 0) ||
               (have_rt && one_below(src, oci, strlen(oci), "/ld.so.preload"));
    if ((src = our_bind(m, OCI_CG_EMU_STATE, true)))
        return state && strcmp(src, state) == 0;
    /* The emulator's libraries: mounted at their own path, as listed in LD_LIBRARY_PATH. */
    const char *d = json_string_value(json_object_get(m, "destination"));
    return d && in_path_list(libpath, d) && (src = our_bind(m, d, false)) && strcmp(src, d) == 0;
}

/* Removes a previous injection: our mounts and our hooks. */
static void strip(json_t *mounts, json_t *hooks, const struct oci_inject *in)
{
    for (size_t i = 0; i < json_array_size(mounts);) {
        if (our_mount(json_array_get(mounts, i), in))
            json_array_remove(mounts, i);
        else
            i++;
    }
    const char *kind;
    json_t *arr;
    json_object_foreach(hooks, kind, arr) {
        for (size_t i = 0; json_is_array(arr) && i < json_array_size(arr);) {
            if (our_hook(json_array_get(arr, i)))
                json_array_remove(arr, i);
            else
                i++;
        }
    }
}

static int add_hook(json_t *hooks, const char *kind, const struct oci_inject *in, const char *what,
                    char *err, size_t errlen)
{
    json_t *arr = child(hooks, kind, true, err, errlen);
    if (!arr)
        return -1;
    json_t *args = json_array();
    json_array_append_new(args, json_string(in->hook_path));
    for (const char *const *a = in->hook_args; a && *a; a++)
        json_array_append_new(args, json_string(*a));
    json_array_append_new(args, json_string("hook"));
    json_array_append_new(args, json_string(what));
    json_t *h = json_pack("{s:s,s:o,s:i}", "path", in->hook_path, "args", args, "timeout", 30);
    if (!h || json_array_append_new(arr, h) != 0)
        return fail(err, errlen, "%s", "out of memory");
    return 0;
}

int oci_spec_inject(json_t *config, const struct oci_inject *in, char *err, size_t errlen)
{
    json_t *process = json_object_get(config, "process");
    if (!json_is_object(process))
        return fail(err, errlen, "%s", "config.json has no \"process\" section");
    const char *lib = json_string_value(json_object_get(in->env, "LD_PRELOAD"));
    if (!lib || lib[0] != '/')
        return fail(err, errlen, "%s", "the daemon's answer names no interposer (LD_PRELOAD)");
    json_t *env, *mounts, *hooks;
    if (!(env = child(process, "env", true, err, errlen)) ||
        !(mounts = child(config, "mounts", true, err, errlen)) ||
        !(hooks = child(config, "hooks", false, err, errlen)))
        return -1;
    strip(mounts, hooks, in);

    /* Mounts: the private dir, the interposer, ld.so.preload; the emulator where it is used. */
#define ADD_MOUNT(dest, src, rw)                                                               \
    do {                                                                                       \
        if (json_array_append_new(mounts, bind_mount((dest), (src), (rw))) != 0)             \
            return fail(err, errlen, "%s", "out of memory");                                   \
    } while (0)
    ADD_MOUNT(OCI_CG_DIR, in->container_dir, false);
    ADD_MOUNT(OCI_CG_LIB, lib, false);
    ADD_MOUNT(OCI_CG_PRELOAD, in->preload_file, false);
    const char *libpath = json_string_value(json_object_get(in->env, "LD_LIBRARY_PATH"));
    if (libpath) {
        char *copy = strdup(libpath), *save = NULL;
        if (!copy)
            return fail(err, errlen, "%s", "out of memory");
        for (char *d = strtok_r(copy, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
            if (d[0] != '/')
                continue;
            ADD_MOUNT(d, d, false);
        }
        free(copy);
    }
    const char *state = json_string_value(json_object_get(in->env, "CONVGPU_EMU_STATE"));
    if (state && state[0] == '/')
        ADD_MOUNT(OCI_CG_EMU_STATE, state, true);
#undef ADD_MOUNT

    /* Environment: the daemon's, with the in-container paths. */
    const char *key;
    json_t *v;
    json_object_foreach(in->env, key, v) {
        const char *s = json_string_value(v);
        if (!s)
            continue;
        char *joined = NULL;
        if (strcmp(key, "LD_PRELOAD") == 0)
            s = joined = path_prepend(OCI_CG_LIB, env_get(env, key));
        else if (strcmp(key, "LD_LIBRARY_PATH") == 0)
            s = joined = path_prepend(s, env_get(env, key));
        else if (strcmp(key, "CONVGPU_SOCKET") == 0)
            s = OCI_CG_SOCKET;
        else if (strcmp(key, "CONVGPU_EMU_STATE") == 0)
            s = OCI_CG_EMU_STATE;
        int rc = s ? env_set(env, key, s) : -1;
        free(joined);
        if (rc != 0)
            return fail(err, errlen, "%s", "out of memory");
    }
    if (in->nvidia) {
        const char *uuid = json_string_value(json_object_get(in->env, "CUDA_VISIBLE_DEVICES"));
        if (uuid && env_set(env, "NVIDIA_VISIBLE_DEVICES", uuid) != 0)
            return fail(err, errlen, "%s", "out of memory");
        if (!env_get(env, "NVIDIA_DRIVER_CAPABILITIES") &&
            env_set(env, "NVIDIA_DRIVER_CAPABILITIES", "compute,utility") != 0)
            return fail(err, errlen, "%s", "out of memory");
    }

    if (in->hooks && (add_hook(hooks, "createRuntime", in, "create-runtime", err, errlen) != 0 ||
                      add_hook(hooks, "poststop", in, "poststop", err, errlen) != 0))
        return -1;
    return 0;
}

char *oci_preload_text(const char *image_preload)
{
    size_t n = strlen(OCI_CG_LIB) + 2 + (image_preload ? strlen(image_preload) + 1 : 0);
    char *out = malloc(n), *copy = image_preload ? strdup(image_preload) : NULL;
    if (!out || (image_preload && !copy)) {
        free(out);
        free(copy);
        return NULL;
    }
    snprintf(out, n, "%s\n", OCI_CG_LIB);
    char *save = NULL;
    for (char *t = copy ? strtok_r(copy, " \t\r\n:", &save) : NULL; t;
         t = strtok_r(NULL, " \t\r\n:", &save)) {
        if (strcmp(t, OCI_CG_LIB) != 0) {
            strcat(out, t);
            strcat(out, "\n");
        }
    }
    free(copy);
    return out;
}
