/* config.h — the emulated machine's configuration: CONVGPU_EMU_* variables, device UUIDs and
 * CUDA_VISIBLE_DEVICES, parsed by pure functions shared by libcuda.so.1 and libnvidia-ml.so.1. */
#ifndef CONVGPU_EMU_CONFIG_H
#define CONVGPU_EMU_CONFIG_H

#include <stddef.h>
#include <stdint.h>

#define EMU_MAX_DEVICES 16
#define EMU_PATH_MAX    256
#define EMU_ERR_MAX     256

/* Defaults; docs/EMULATOR.md is the user-facing statement of these. */
#define EMU_DEFAULT_DEVICES     "5GiB"              /* the paper's GPU */
#define EMU_DEFAULT_CONTEXT     (66ull << 20)       /* the paper's per-process context figure */
#define EMU_DEFAULT_GRANULARITY (2ull << 20)
#define EMU_PITCH_ALIGNMENT     512u                /* cuMemAllocPitch; TEXTURE_PITCH_ALIGNMENT */
#define EMU_DEFAULT_SAMPLE_MS   166u                /* NVML sample period (recent GPUs: ~1/6 s) */
#define EMU_SAMPLE_MS_MIN       20u
#define EMU_SAMPLE_MS_MAX       10000u
/* A context's turn on a contended device (CONVGPU_EMU_TIMESLICE_US): 1024 us, the default TSG
 * timeslice of NVIDIA's open nvgpu driver; 0 = turns of whole kernels (no preemption). */
#define EMU_DEFAULT_TIMESLICE_US 1024u
#define EMU_TIMESLICE_US_MIN    100u
#define EMU_TIMESLICE_US_MAX    50000u

typedef struct {
    unsigned ndev;
    uint64_t total[EMU_MAX_DEVICES];
    uint64_t ctx_charge;   /* per process and device, already rounded up to granularity */
    uint64_t granularity;  /* power of two, at least 4 KiB */
    uint64_t sample_ns;    /* NVML sample period (CONVGPU_EMU_SAMPLE_MS) */
    uint64_t timeslice_ns; /* a context's turn when others wait; 0: whole kernels */
    char state_path[EMU_PATH_MAX];
} emu_config;

/* Reads CONVGPU_EMU_DEVICES, _CONTEXT, _GRANULARITY, _SAMPLE_MS, _TIMESLICE_US and _STATE. Returns 0, or -1 with a
 * one-line reason in err. */
int emu_config_from_env(emu_config *cfg, char *err, size_t errlen);

/* "5GiB", "2x16GiB", "8GiB,16GiB", "2x8GiB,16GiB". Returns 0, or -1 with a reason. */
int emu_parse_devices(const char *spec, uint64_t *totals, unsigned *ndev, char *err,
                      size_t errlen);

/* Same device list, context charge, granularity, sample period and timeslice (the state path
 * is not compared). */
int emu_config_same_devices(const emu_config *a, const emu_config *b);

/* Deterministic UUID of physical device idx, so every process and both libraries agree. */
void emu_device_uuid(unsigned idx, uint64_t total, unsigned char out[16]);

/* The marketing name both libraries report, e.g. "ConvGPU Emulated GPU 5GiB". */
void emu_device_name(uint64_t total, char *out, size_t len);

/* "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" (41 bytes with the NUL). */
#define EMU_UUID_STRLEN 41
void emu_uuid_string(const unsigned char uuid[16], char out[EMU_UUID_STRLEN]);

/* Applies CUDA_VISIBLE_DEVICES (env may be NULL = unset) the way the driver does: entries are
 * indices or GPU-UUID prefixes; the list stops at the first invalid, ambiguous or repeated
 * entry. map[i] receives the physical index of visible ordinal i. Returns the visible count. */
unsigned emu_visible_devices(const char *env, unsigned nphys,
                             const unsigned char uuids[][16], unsigned map[EMU_MAX_DEVICES]);

static inline uint64_t emu_round_up(uint64_t v, uint64_t g) { return (v + g - 1) / g * g; }

#endif
