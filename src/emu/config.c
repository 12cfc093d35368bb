/* config.c — parsing of the emulator's environment (devices, context charge, granularity,
 * state path) and of CUDA_VISIBLE_DEVICES, plus the devices' deterministic UUIDs. */
#include "config.h"

#include "size.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

__attribute__((format(printf, 3, 4)))
static int failf(char *err, size_t errlen, const char *fmt, ...)
{
    if (err && errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return -1;
}

int emu_parse_devices(const char *spec, uint64_t *totals, unsigned *ndev, char *err,
                      size_t errlen)
{
    char buf[512];
    unsigned n = 0;

    if (!spec || !*spec)
        return failf(err, errlen, "CONVGPU_EMU_DEVICES is empty");
    if (strlen(spec) >= sizeof buf)
        return failf(err, errlen, "CONVGPU_EMU_DEVICES is too long");
    strcpy(buf, spec);

    char *save = NULL;
    for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        while (isspace((unsigned char)*tok))
            tok++;
        char *end = tok + strlen(tok);
        while (end > tok && isspace((unsigned char)end[-1]))
            *--end = '\0';

        /* Optional "<count>x" prefix: digits followed by 'x' and then a size. */
        unsigned long count = 1;
        char *x = strchr(tok, 'x');
        if (!x)
            x = strchr(tok, 'X');
        if (x) {
            char *p = tok;
            count = 0;
            for (; p < x; p++) {
                if (!isdigit((unsigned char)*p) || count > EMU_MAX_DEVICES)
                    return failf(err, errlen,
                                 "CONVGPU_EMU_DEVICES entry '%s': bad count before 'x'", tok);
                count = count * 10 + (unsigned long)(*p - '0');
            }
            if (p == tok || count == 0)
                return failf(err, errlen, "CONVGPU_EMU_DEVICES entry '%s': bad count", tok);
            tok = x + 1;
        }
        uint64_t size;
        const char *why = NULL;
        if (cg_parse_size(tok, &size, &why) != 0)
            return failf(err, errlen, "CONVGPU_EMU_DEVICES: bad size '%s': %s", tok, why);
        if (size == 0)
            return failf(err, errlen, "CONVGPU_EMU_DEVICES: device size '%s' is zero", tok);
        if (count > EMU_MAX_DEVICES - n)
            return failf(err, errlen, "CONVGPU_EMU_DEVICES: more than 16 devices");
        for (unsigned long i = 0; i < count; i++)
            totals[n++] = size;
    }
    if (n == 0)
        return failf(err, errlen, "CONVGPU_EMU_DEVICES lists no device");
    *ndev = n;
    return 0;
}

/* A whole number from the environment into *out (dflt when unset): 0, or -1 when the variable
 * is set to anything else (a sign, a unit, nothing, more than fits). */
static int env_whole(const char *name, unsigned long dflt, unsigned long *out)
{
    const char *v = getenv(name);
    *out = dflt;
    if (!v)
        return 0;
    char *end;
    errno = 0;
    unsigned long n = strtoul(v, &end, 10);
    if (!isdigit((unsigned char)*v) || *end || errno)
        return -1;
    *out = n;
    return 0;
}

static int env_size(const char *name, uint64_t dflt, uint64_t *out, char *err, size_t errlen)
{
    const char *v = getenv(name);
    if (!v) {
        *out = dflt;
        return 0;
    }
    const char *why = NULL;
    if (cg_parse_size(v, out, &why) != 0)
        return failf(err, errlen, "%s: %s", name, why);
    return 0;
}

int emu_config_from_env(emu_config *cfg, char *err, size_t errlen)
{
    memset(cfg, 0, sizeof *cfg);

    const char *devs = getenv("CONVGPU_EMU_DEVICES");
    if (emu_parse_devices(devs ? devs : EMU_DEFAULT_DEVICES, cfg->total, &cfg->ndev, err,
                          errlen) != 0)
        return -1;

    uint64_t ctx, gran;
    if (env_size("CONVGPU_EMU_GRANULARITY", EMU_DEFAULT_GRANULARITY, &gran, err, errlen) ||
        env_size("CONVGPU_EMU_CONTEXT", EMU_DEFAULT_CONTEXT, &ctx, err, errlen))
        return -1;
    /* VMM maps memfd pages at granule offsets, so a granule must be whole pages. */
    if (gran < 4096 || (gran & (gran - 1)) != 0 || gran > (1ull << 30))
        return failf(err, errlen,
                     "CONVGPU_EMU_GRANULARITY must be a power of two between 4KiB and 1GiB");
    cfg->granularity = gran;
    cfg->ctx_charge = emu_round_up(ctx, gran);
    for (unsigned i = 0; i < cfg->ndev; i++) {
        if (cfg->total[i] < cfg->ctx_charge + gran) {
            char t[CG_SIZE_BUFLEN];
            cg_format_size(cfg->total[i], t, sizeof t);
            return failf(err, errlen,
                         "device size %s cannot hold one context charge plus one granule", t);
        }
    }

    unsigned long ms, slice;
    if (env_whole("CONVGPU_EMU_SAMPLE_MS", EMU_DEFAULT_SAMPLE_MS, &ms) != 0 ||
        ms < EMU_SAMPLE_MS_MIN || ms > EMU_SAMPLE_MS_MAX)
        return failf(err, errlen, "CONVGPU_EMU_SAMPLE_MS must be a whole number of "
                     "milliseconds from %u to %u", EMU_SAMPLE_MS_MIN, EMU_SAMPLE_MS_MAX);
    cfg->sample_ns = (uint64_t)ms * 1000000u;
    if (env_whole("CONVGPU_EMU_TIMESLICE_US", EMU_DEFAULT_TIMESLICE_US, &slice) != 0 ||
        (slice != 0 && (slice < EMU_TIMESLICE_US_MIN || slice > EMU_TIMESLICE_US_MAX)))
        return failf(err, errlen, "CONVGPU_EMU_TIMESLICE_US must be 0 (turns of whole "
                     "kernels) or a whole number of microseconds from %u to %u",
                     EMU_TIMESLICE_US_MIN, EMU_TIMESLICE_US_MAX);
    cfg->timeslice_ns = (uint64_t)slice * 1000u;

    const char *state = getenv("CONVGPU_EMU_STATE");
    int len;
    if (state && *state)
        len = snprintf(cfg->state_path, sizeof cfg->state_path, "%s", state);
    else
        len = snprintf(cfg->state_path, sizeof cfg->state_path, "/dev/shm/convgpu-emu-%u",
                       (unsigned)getuid());
    if (len < 0 || (size_t)len >= sizeof cfg->state_path)
        return failf(err, errlen, "CONVGPU_EMU_STATE is longer than 255 bytes");
    return 0;
}

int emu_config_same_devices(const emu_config *a, const emu_config *b)
{
    if (a->ndev != b->ndev || a->ctx_charge != b->ctx_charge ||
        a->granularity != b->granularity || a->sample_ns != b->sample_ns ||
        a->timeslice_ns != b->timeslice_ns)
        return 0;
    for (unsigned i = 0; i < a->ndev; i++)
        if (a->total[i] != b->total[i])
            return 0;
    return 1;
}

/* splitmix64: a well-mixed, stable function of (index, size). */
static uint64_t mix64(uint64_t z)
{
    z += 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

void emu_device_uuid(unsigned idx, uint64_t total, unsigned char out[16])
{
    uint64_t h1 = mix64(0xc0c0c0c0ull ^ idx);
    uint64_t h2 = mix64(h1 ^ total);
    h1 = mix64(h2 + idx);
    for (int i = 0; i < 8; i++) {
        out[i] = (unsigned char)(h1 >> (8 * i));
        out[8 + i] = (unsigned char)(h2 >> (8 * i));
    }
}

void emu_device_name(uint64_t total, char *out, size_t len)
{
    char t[CG_SIZE_BUFLEN];
    snprintf(out, len, "ConvGPU Emulated GPU %s", cg_format_size(total, t, sizeof t));
}

void emu_uuid_string(const unsigned char u[16], char out[EMU_UUID_STRLEN])
{
    snprintf(out, EMU_UUID_STRLEN,
             "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0],
             u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13],
             u[14], u[15]);
}

/* Resolves one CUDA_VISIBLE_DEVICES entry to a physical index, or -1 if it is invalid. */
static int visible_entry(const char *tok, unsigned nphys, const unsigned char uuids[][16])
{
    if (!*tok)
        return -1;
    if (isdigit((unsigned char)*tok)) {
        unsigned long v = 0;
        for (const char *p = tok; *p; p++) {
            if (!isdigit((unsigned char)*p) || v > EMU_MAX_DEVICES)
                return -1;
            v = v * 10 + (unsigned long)(*p - '0');
        }
        return v < nphys ? (int)v : -1;
    }
    if (strncasecmp(tok, "GPU-", 4) != 0 || strlen(tok) <= 4)
        return -1;
    int found = -1;
    for (unsigned i = 0; i < nphys; i++) {
        char s[EMU_UUID_STRLEN];
        emu_uuid_string(uuids[i], s);
        if (strncasecmp(s, tok, strlen(tok)) == 0) {
            if (found >= 0)
                return -1; /* ambiguous prefix */
            found = (int)i;
        }
    }
    return found;
}

unsigned emu_visible_devices(const char *env, unsigned nphys,
                             const unsigned char uuids[][16], unsigned map[EMU_MAX_DEVICES])
{
    if (!env) {
        for (unsigned i = 0; i < nphys; i++)
            map[i] = i;
        return nphys;
    }
    char buf[1024];
    snprintf(buf, sizeof buf, "%s", env);
    unsigned n = 0;
    char *p = buf;
    while (p && n < EMU_MAX_DEVICES) {
        char *comma = strchr(p, ',');
        if (comma)
            *comma = '\0';
        while (isspace((unsigned char)*p))
            p++;
        char *end = p + strlen(p);
        while (end > p && isspace((unsigned char)end[-1]))
            *--end = '\0';
        int phys = visible_entry(p, nphys, uuids);
        if (phys < 0)
            break;
        for (unsigned i = 0; i < n; i++)
            if (map[i] == (unsigned)phys)
                return n; /* a repeated device ends the list */
        map[n++] = (unsigned)phys;
        p = comma ? comma + 1 : NULL;
    }
    return n;
}
