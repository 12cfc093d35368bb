/* request.c — parsing and checking --gpu-mem, --gpu-compute and --gpu-count (request.h). */
#include "request.h"

#include <stdio.h>

#include "core.h"
#include "size.h"

/* Slurm's special step ids (slurm.h), named here so that this file needs no Slurm header and
 * its unit test builds without libslurm-dev. */
#define STEP_EXTERN 0xfffffffcu
#define STEP_BATCH 0xfffffffbu
#define STEP_INTERACTIVE 0xfffffffau

int slurm_parse_gpu_mem(const char *text, uint64_t *bytes, char *err, size_t errlen)
{
    const char *why = NULL;
    uint64_t v = 0;
    if (!text || cg_parse_size(text, &v, &why) != 0) {
        snprintf(err, errlen, "--gpu-mem=%.64s: %s (sizes look like 512MiB, 1.5GiB, 4096)",
                 text ? text : "", why ? why : "not a size");
        return -1;
    }
    if (v == 0) {
        snprintf(err, errlen, "--gpu-mem=%.64s: a limit of 0 bytes leaves nothing to allocate; "
                              "leave the option out to run without convgpu", text);
        return -1;
    }
    *bytes = v;
    return 0;
}

int slurm_parse_gpu_compute(const char *text, unsigned *pct, char *err, size_t errlen)
{
    if (!cg_compute_pct_parse(text, pct)) {
        snprintf(err, errlen, "--gpu-compute=%.64s: a share is a whole percent of one GPU's "
                              "time, 1 to 100 (e.g. --gpu-compute=30)", text ? text : "");
        return -1;
    }
    return 0;
}

int slurm_parse_gpu_count(const char *text, unsigned *gpus, char *err, size_t errlen)
{
    /* Digits only: no sign, space or suffix, and at most three of them so nothing overflows. */
    unsigned v = 0;
    size_t n = 0;
    while (text && text[n] >= '0' && text[n] <= '9' && n < 3)
        v = v * 10 + (unsigned)(text[n++] - '0');
    if (!text || n == 0 || text[n] != '\0' || v < 1 || v > SLURM_GPU_COUNT_MAX) {
        snprintf(err, errlen, "--gpu-count=%.64s: a number of GPUs on each node, 1 to %d, each "
                              "with the whole --gpu-mem (e.g. --gpu-count=2)",
                 text ? text : "", SLURM_GPU_COUNT_MAX);
        return -1;
    }
    *gpus = v;
    return 0;
}

int slurm_check_request(const struct slurm_gpu_request *req, char *err, size_t errlen)
{
    if (req->compute_pct && !req->bytes) {
        snprintf(err, errlen, "--gpu-compute needs --gpu-mem: a compute share belongs to a "
                              "convgpu container, and only a GPU-memory request makes one");
        return -1;
    }
    const char *needs = req->compute_mode ? "--gpu-compute-mode"
                        : req->has_priority ? "--gpu-priority"
                        : req->no_swap      ? "--gpu-no-swap"
                        : req->exclusive    ? "--gpu-exclusive"
                                            : NULL;
    if (needs && !req->bytes) {
        snprintf(err, errlen, "%s needs --gpu-mem: only a GPU-memory request makes a convgpu "
                              "container", needs);
        return -1;
    }
    if (req->compute_mode && !req->compute_pct) {
        snprintf(err, errlen, "--gpu-compute-mode needs a share: give --gpu-compute too");
        return -1;
    }
    if (req->gpus && !req->bytes) {
        snprintf(err, errlen, "--gpu-count needs --gpu-mem: the limit is given per GPU, and "
                              "only a GPU-memory request makes a convgpu container");
        return -1;
    }
    return 0;
}

void slurm_step_container_id(uint32_t job, uint32_t step, char *buf, size_t len)
{
    switch (step) {
    case STEP_BATCH: snprintf(buf, len, "slurm-%u.batch", job); break;
    case STEP_EXTERN: snprintf(buf, len, "slurm-%u.extern", job); break;
    case STEP_INTERACTIVE: snprintf(buf, len, "slurm-%u.interactive", job); break;
    default: snprintf(buf, len, "slurm-%u.%u", job, step); break;
    }
}
