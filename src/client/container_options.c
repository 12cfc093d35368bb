/* container_options.c — the table of container options and the one parser of their values
 * (container_options.h). A new option is a row here, a field of struct cg_client_spec and a key
 * in cgc_create_body(); every door then offers it under the row's spelling for that door. */
#include "container_options.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"
#include "name_chars.h"
#include "size.h"

#define CLI (CGC_DOOR_RUN | CGC_DOOR_CREATE)
#define ALL_MAKERS (CLI | CGC_DOOR_DOCKER | CGC_DOOR_OCI | CGC_DOOR_SPANK | CGC_DOOR_API)

const struct cgc_option cgc_options[CGC_OPT_COUNT] = {
    [CGC_OPT_GPU_MEMORY] = {CGC_OPT_GPU_MEMORY, "gpu-memory", "SIZE", "gpu_memory",
                            "CONVGPU_GPU_MEMORY", "com.convgpu.gpu-memory", "gpu-mem",
                            CGC_TYPE_SIZE, 0, 0, NULL, ALL_MAKERS | CGC_DOOR_SET,
                            "the GPU-memory limit: 512MiB, 1GiB, 1.5GiB or bytes", NULL},
    [CGC_OPT_GPU_COMPUTE] = {CGC_OPT_GPU_COMPUTE, "gpu-compute", "PCT", "gpu_compute",
                             "CONVGPU_GPU_COMPUTE", "com.convgpu.gpu-compute", "gpu-compute",
                             CGC_TYPE_PERCENT, 1, 100, NULL,
                             ALL_MAKERS | CGC_DOOR_SET,
                             "its share of the GPU's time, a whole percent 1-100", NULL},
    [CGC_OPT_COMPUTE_MODE] = {CGC_OPT_COMPUTE_MODE, "compute-mode", "MODE", "compute_mode",
                              "CONVGPU_COMPUTE_MODE", "com.convgpu.compute-mode", "gpu-compute-mode", CGC_TYPE_CHOICE, 0, 0, "hard|elastic",
                              ALL_MAKERS | CGC_DOOR_SET,
                              "elastic: may use time nobody else wants; hard: never more than "
                              "its share",
                              NULL},
    [CGC_OPT_PRIORITY] = {CGC_OPT_PRIORITY, "priority", "N", "priority", "CONVGPU_PRIORITY",
                          "com.convgpu.priority", "gpu-priority", CGC_TYPE_INT, 0, 9, NULL,
                          ALL_MAKERS | CGC_DOOR_SET | CGC_DOOR_K8S,
                          "0-9, higher goes first when memory is short", NULL},
    [CGC_OPT_NO_SWAP] = {CGC_OPT_NO_SWAP, "no-swap", NULL, "swap", "CONVGPU_NO_SWAP",
                         "com.convgpu.no-swap", "gpu-no-swap", CGC_TYPE_FLAG, 0, 0, NULL,
                         ALL_MAKERS | CGC_DOOR_K8S, "never move its memory to the host",
                         "fixed when made (set cannot change it)"},
    [CGC_OPT_EXCLUSIVE] = {CGC_OPT_EXCLUSIVE, "exclusive", NULL, "exclusive",
                           "CONVGPU_EXCLUSIVE", "com.convgpu.exclusive", "gpu-exclusive",
                           CGC_TYPE_FLAG, 0, 0, NULL, ALL_MAKERS | CGC_DOOR_K8S,
                           "a whole GPU: none joins it while this one runs",
                           "fixed when made (set cannot change it)"},
    [CGC_OPT_TENANT] = {CGC_OPT_TENANT, "tenant", "NAME", "tenant", NULL, NULL, NULL,
                        CGC_TYPE_NAME, 1, 32, NULL, CLI | CGC_DOOR_API,
                        "its tenant (default: the caller's user; another: root only)",
                        "the shim, the SPANK plugin and the device plugin run as root: a "
                        "tenant there comes from who asks (the user, the pod's namespace), "
                        "never from the workload's own variables"},
    [CGC_OPT_DEVICE] = {CGC_OPT_DEVICE, "device", "N", "device", "CONVGPU_GPU_DEVICE",
                        "com.convgpu.device", NULL, CGC_TYPE_INT, 0, 1024, NULL,
                        CLI | CGC_DOOR_DOCKER | CGC_DOOR_OCI | CGC_DOOR_API,
                        "the GPU (default: the placement policy chooses)",
                        "Slurm chooses a step's GPUs (GRES), not the job"},
    [CGC_OPT_GPUS] = {CGC_OPT_GPUS, "gpus", "N", "gpus", "CONVGPU_GPUS", "com.convgpu.gpus",
                      "gpu-count", CGC_TYPE_INT, 1, CGC_OPT_MAX_GPUS, NULL,
                      ALL_MAKERS,
                      "N GPUs, the limit and share on each", NULL},
    [CGC_OPT_DEVICES] = {CGC_OPT_DEVICES, "devices", "LIST", "devices", NULL, NULL, NULL,
                         CGC_TYPE_INDEXES, 0, 0, NULL, CLI | CGC_DOOR_API,
                         "which GPUs, e.g. 0,2 (CUDA device k is the k-th listed)",
                         "in Kubernetes the device plugin names them (CONVGPU_K8S_GPUS)"},
    [CGC_OPT_LIMIT] = {CGC_OPT_LIMIT, "limit", "profile", "profile_limit", NULL, NULL, NULL,
                       CGC_TYPE_CHOICE, 0, 0, "profile", CGC_DOOR_RUN | CGC_DOOR_API,
                       "the limit from past runs of the command (convgpu profile)",
                       "a profile belongs to a command: create runs none; the shim and SPANK "
                       "take it from a daemon with profile-limits set"},
    [CGC_OPT_NAME] = {CGC_OPT_NAME, "name", "NAME", "name", NULL, NULL, NULL, CGC_TYPE_NAME,
                      1, 64, NULL, CLI | CGC_DOOR_API, "a name for convgpu ps / inspect / rm",
                      "containers made by an engine are named by the engine"},
};

const struct cgc_option *cgc_option_find(unsigned door, const char *name)
{
    if (!name)
        return NULL;
    for (size_t i = 0; i < CGC_OPT_COUNT; i++) {
        const struct cgc_option *o = &cgc_options[i];
        if (!(o->doors & door))
            continue;
        const char *spelling = door & (CGC_DOOR_RUN | CGC_DOOR_CREATE | CGC_DOOR_SET |
                                       CGC_DOOR_K8S)
                                   ? o->flag
                               : door == CGC_DOOR_SPANK ? o->spank
                               : door == CGC_DOOR_API   ? o->api_key
                                                        : NULL;
        if (door & (CGC_DOOR_DOCKER | CGC_DOOR_OCI)) {
            if ((o->env && strcmp(o->env, name) == 0) ||
                (o->annotation && strcmp(o->annotation, name) == 0))
                return o;
            continue;
        }
        if (spelling && strcmp(spelling, name) == 0)
            return o;
    }
    return NULL;
}

__attribute__((format(printf, 3, 4))) static int fail(char *err, size_t errlen, const char *fmt,
                                                      ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return -1;
}

static bool parse_long(const char *text, long *out)
{
    char *end;
    errno = 0;
    if (!(*text >= '0' && *text <= '9'))
        return false;
    long v = strtol(text, &end, 10);
    if (errno || *end)
        return false;
    *out = v;
    return true;
}

static bool choice_ok(const char *choices, const char *text)
{
    size_t n = strlen(text);
    for (const char *p = choices; *p;) {
        const char *bar = strchr(p, '|');
        size_t len = bar ? (size_t)(bar - p) : strlen(p);
        if (len == n && n > 0 && strncmp(p, text, n) == 0)
            return true;
        p += len + (bar ? 1 : 0);
    }
    return false;
}

/* The value's store: the field of spec the row fills. */
static void store(const struct cgc_option *o, struct cgc_option_values *v, long n,
                  const char *text, bool yes)
{
    struct cg_client_spec *s = &v->spec;
    switch (o->id) {
    case CGC_OPT_GPU_MEMORY: break; /* stored by the caller of parse (a uint64) */
    case CGC_OPT_GPU_COMPUTE: s->compute_pct = (unsigned)n; break;
    case CGC_OPT_COMPUTE_MODE: s->compute_mode = text; break;
    case CGC_OPT_PRIORITY: s->priority = (int)n; s->has_priority = true; break;
    case CGC_OPT_NO_SWAP: s->no_swap = yes; break;
    case CGC_OPT_EXCLUSIVE: s->exclusive = yes; break;
    case CGC_OPT_TENANT: s->tenant = text; break;
    case CGC_OPT_DEVICE: s->device = n; s->has_device = true; break;
    case CGC_OPT_GPUS: s->gpus = (unsigned)n; break;
    case CGC_OPT_DEVICES: s->devices = v->devices; break;
    case CGC_OPT_LIMIT: s->profile_limit = true; break;
    case CGC_OPT_NAME: s->name = text; break;
    case CGC_OPT_COUNT: break;
    }
}

int cgc_option_apply(const struct cgc_option *o, const char *where, const char *text,
                     struct cgc_option_values *v, char *err, size_t errlen)
{
    long n = 0;
    bool yes = true;
    switch (o->type) {
    case CGC_TYPE_SIZE: {
        uint64_t bytes = 0;
        const char *why = NULL;
        if (!text || cg_parse_size(text, &bytes, &why) != 0 || bytes == 0)
            return fail(err, errlen, "bad %s '%s': %s (e.g. 512MiB, 1GiB or a number of bytes)",
                        where, text ? text : "", why ? why : "must be greater than zero");
        v->spec.gpu_memory = bytes;
        break;
    }
    case CGC_TYPE_PERCENT: {
        unsigned pct = 0;
        if (!text || !cg_compute_pct_parse(text, &pct) || pct < (unsigned)o->min ||
            pct > (unsigned)o->max)
            return fail(err, errlen, "bad %s '%s': a whole percentage from %ld to %ld", where,
                        text ? text : "", o->min, o->max);
        n = pct;
        break;
    }
    case CGC_TYPE_INT:
        if (!text || !parse_long(text, &n) || n < o->min || n > o->max)
            return fail(err, errlen, "bad %s '%s': a whole number from %ld to %ld", where,
                        text ? text : "", o->min, o->max);
        break;
    case CGC_TYPE_CHOICE:
        if (!text || !choice_ok(o->choices, text)) {
            char list[64];
            snprintf(list, sizeof list, "%s", o->choices);
            for (char *p = list; (p = strchr(p, '|'));)
                *p = '/';
            return fail(err, errlen, "bad %s '%s': one of %s", where, text ? text : "", list);
        }
        break;
    case CGC_TYPE_FLAG:
        if (!text || strcmp(text, "yes") == 0 || strcmp(text, "true") == 0 ||
            strcmp(text, "1") == 0)
            yes = true;
        else if (strcmp(text, "no") == 0 || strcmp(text, "false") == 0 || strcmp(text, "0") == 0)
            yes = false;
        else
            return fail(err, errlen, "bad %s '%s': yes or no", where, text);
        break;
    case CGC_TYPE_NAME:
        if (!text || !cg_name_chars_ok(text, (size_t)o->max))
            return fail(err, errlen, "bad %s '%s': 1 to %ld of A-Z a-z 0-9 _ . -, not starting "
                                     "with . or -",
                        where, text ? text : "", o->max);
        break;
    case CGC_TYPE_INDEXES: {
        size_t count = 0;
        const char *p = text ? text : "";
        bool ok = *p != '\0';
        while (ok && *p) {
            char *end;
            errno = 0;
            long d = *p >= '0' && *p <= '9' ? strtol(p, &end, 10) : -1;
            ok = d >= 0 && !errno && d < CGC_OPT_MAX_GPUS && (*end == ',' || *end == '\0') &&
                 !(*end == ',' && end[1] == '\0') && count < CGC_OPT_MAX_GPUS;
            for (size_t i = 0; ok && i < count; i++)
                ok = v->devices[i] != (unsigned)d;
            if (ok) {
                v->devices[count++] = (unsigned)d;
                p = *end ? end + 1 : end;
            }
        }
        if (!ok)
            return fail(err, errlen, "bad %s '%s': GPU indexes such as 0,2 (each once)", where,
                        text ? text : "");
        v->spec.ndevices = count;
        break;
    }
    }
    store(o, v, n, text, yes);
    v->given[o->id] = true;
    return 0;
}

int cgc_options_check(const struct cgc_option_values *v, char *err, size_t errlen)
{
    const struct cg_client_spec *s = &v->spec;
    if (v->given[CGC_OPT_COMPUTE_MODE] && !v->given[CGC_OPT_GPU_COMPUTE])
        return fail(err, errlen, "--compute-mode needs a share: give --%s PCT too",
                    cgc_options[CGC_OPT_GPU_COMPUTE].flag);
    if (s->ndevices && (s->has_device || (s->gpus && s->gpus != s->ndevices)))
        return fail(err, errlen, "--devices lists the GPUs: not with --device, and with --gpus "
                                 "only as many as it says");
    if (s->gpus > 1 && s->has_device)
        return fail(err, errlen, "--device names one GPU; name several with --devices");
    return 0;
}

void cgc_options_usage(unsigned door, char *out, size_t len)
{
    size_t used = 0;
    out[0] = '\0';
    for (size_t i = 0; i < CGC_OPT_COUNT && used < len; i++) {
        const struct cgc_option *o = &cgc_options[i];
        if (!(o->doors & door))
            continue;
        char left[48];
        snprintf(left, sizeof left, "--%s%s%s", o->flag, o->arg ? " " : "", o->arg ? o->arg : "");
        int w = snprintf(out + used, len - used, "  %-22s%s\n", left, o->help);
        if (w < 0)
            break;
        used += (size_t)w;
    }
}
