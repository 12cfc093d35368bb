/* container_options.h — every option a container can be made with, in one table, and the one
 * parser of their values. Each door that makes a container reads its own spelling of an option
 * from a row here and parses the value with cgc_option_apply(): `convgpu run`, `convgpu create`,
 * `convgpu set` (the changeable rows), `convgpu docker run` (the -e variables it passes on), the
 * OCI shim (process.env, then annotations; images' labels use the annotation keys), the SPANK
 * plugin (srun/sbatch options) and the device plugin (its own flags, the operator's: a pod asks
 * for memory, compute and GPUs as resources and writes nothing else the plugin reads). So a limit, a share
 * or a priority means the same, is bounded the same and is refused with the same words wherever
 * it is given; a row with no spelling for a door is an option that door does not offer (and its
 * row says why in `note`).
 *
 * Follow one option: a person types `--priority 7`; the door finds the row whose flag is
 * "priority", cgc_option_apply() checks "7" against the row's type and bounds and sets
 * spec->priority; cgc_options_check() refuses combinations no single value shows (a mode without
 * a share, a device list beside one device); cgc_create_body() writes the row's API key. The
 * test tests/e2e/test_options.sh walks every row through every door and reads back what the
 * daemon recorded. */
#ifndef CONVGPU_CONTAINER_OPTIONS_H
#define CONVGPU_CONTAINER_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>

#include "convgpu_client.h"

#ifdef __cplusplus
extern "C" {
#endif

#define CGC_OPT_MAX_GPUS 64 /* CG_MAX_DEVICES: the most GPUs one container names */

enum cgc_opt_id {
    CGC_OPT_GPU_MEMORY,
    CGC_OPT_GPU_COMPUTE,
    CGC_OPT_COMPUTE_MODE,
    CGC_OPT_PRIORITY,
    CGC_OPT_NO_SWAP,
    CGC_OPT_EXCLUSIVE,
    CGC_OPT_TENANT,
    CGC_OPT_DEVICE,
    CGC_OPT_GPUS,
    CGC_OPT_DEVICES,
    CGC_OPT_LIMIT,
    CGC_OPT_NAME,
    CGC_OPT_COUNT
};

enum cgc_opt_type {
    CGC_TYPE_SIZE,    /* a convgpu size: 512MiB, 1GiB, 1.5G or bytes; greater than zero */
    CGC_TYPE_PERCENT, /* a whole percent, min..max ("30" or "30%") */
    CGC_TYPE_INT,     /* a whole number, min..max */
    CGC_TYPE_CHOICE,  /* one of `choices` ("hard|elastic") */
    CGC_TYPE_FLAG,    /* no value on the command line; elsewhere yes/true/1 or no/false/0 */
    CGC_TYPE_NAME,    /* 1-32 of [A-Za-z0-9_.-], not starting with . or - */
    CGC_TYPE_INDEXES, /* distinct GPU indexes, comma-separated: 0,2 */
};

/* The doors, as bits of cgc_option.doors. */
enum {
    CGC_DOOR_RUN = 1u << 0,    /* convgpu run --FLAG */
    CGC_DOOR_CREATE = 1u << 1, /* convgpu create --FLAG */
    CGC_DOOR_SET = 1u << 2,    /* convgpu set --FLAG: changeable while the container runs */
    CGC_DOOR_DOCKER = 1u << 3, /* convgpu docker run --FLAG, passed on as -e ENV */
    CGC_DOOR_OCI = 1u << 4,    /* the shim: process.env ENV, else the annotation/label */
    CGC_DOOR_SPANK = 1u << 5,  /* srun/sbatch/salloc --SPANK */
    CGC_DOOR_API = 1u << 6,    /* POST /v1/containers {"API_KEY": ...} */
    CGC_DOOR_K8S = 1u << 7,    /* convgpu-device-plugin --FLAG: the node's operator sets it for
                                * every container whose memory the plugin allocates, in the
                                * plugin's record with convgpud (a pod's author writes nothing
                                * the plugin or the shim reads: docs/KUBERNETES.md) */
};

struct cgc_option {
    enum cgc_opt_id id;
    const char *flag;       /* the CLI's --flag, without the dashes */
    const char *arg;        /* its value's name in usage text (NULL for a flag) */
    const char *api_key;    /* the create body's key */
    const char *env;        /* the OCI/docker/device-plugin variable; NULL: not offered there */
    const char *annotation; /* the OCI annotation and image label; NULL: not offered there */
    const char *spank;      /* the SPANK option, without the dashes; NULL: not offered */
    enum cgc_opt_type type;
    long min, max;          /* bounds of INT and PERCENT */
    const char *choices;    /* CHOICE: the accepted values, '|'-separated */
    unsigned doors;         /* CGC_DOOR_* bits where the option is accepted */
    const char *help;       /* one line: what it does */
    const char *note;       /* why a door does not offer it, or NULL */
};

extern const struct cgc_option cgc_options[CGC_OPT_COUNT];

/* The row whose spelling for door is name (a flag for the CLI doors, a variable or annotation
 * for DOCKER/OCI, an option for SPANK, a key for API), NULL when none. */
const struct cgc_option *cgc_option_find(unsigned door, const char *name);

/* Where parsed values live: the spec a door sends, and the storage its pointers need. */
struct cgc_option_values {
    struct cg_client_spec spec;
    unsigned devices[CGC_OPT_MAX_GPUS];
    bool given[CGC_OPT_COUNT]; /* which rows were given (set: what to change) */
    bool compute_none;         /* set --gpu-compute none: remove the share */
};

/* Parses text as row o's value into v. where: how the door names the option in a message
 * ("--priority", "CONVGPU_PRIORITY", "annotation com.convgpu.priority"). A FLAG row takes NULL
 * (given) or yes/no text. Returns 0, or -1 with err: "bad WHERE 'TEXT': WHAT IT WANTS". */
int cgc_option_apply(const struct cgc_option *o, const char *where, const char *text,
                     struct cgc_option_values *v, char *err, size_t errlen);

/* The rules between options: a compute mode needs a share; --devices not with --device, and
 * with --gpus only as many; several GPUs not with one --device. Returns 0, or -1 with err. */
int cgc_options_check(const struct cgc_option_values *v, char *err, size_t errlen);

/* The usage lines of the rows a door accepts ("  --priority N   0-9, ..."), into out. */
void cgc_options_usage(unsigned door, char *out, size_t len);

#ifdef __cplusplus
}
#endif

#endif
