/* cdi.c — the CDI spec of one prepared claim (dra.h). Its one device, gpu.convgpu.io/claim=<UID>,
 * carries everything a container needs to run under the claim's convgpud container, as CDI
 * edits the container runtime applies (no hook runs):
 *   mounts  the container's directory (its socket) at /run/convgpu, read-only; the interposer at
 *           /usr/lib/convgpu/libconvgpu.so; a preload file at /etc/ld.so.preload that loads it
 *           into every process, whatever the process's environment; on the emulated GPU the
 *           emulator's directory and state file;
 *   env     CONVGPU_SOCKET, CUDA_VISIBLE_DEVICES (the claim's GPUs), the emulator's variables,
 *           and CONVGPU_DISABLE=0. A runtime applies a CDI variable over the container's own of
 *           the same name, so a pod's own values of these are replaced.
 * The limit is not in the spec at all: convgpud holds it for the container whose socket is
 * mounted, and the interposer only ever asks convgpud. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cdi_spec.h"
#include "dra.h"

#define CDI_VERSION "0.6.0"
#define IN_CONTAINER_LIB "/usr/lib/convgpu/libconvgpu.so"
#define IN_CONTAINER_PRELOAD "/etc/ld.so.preload"

void dra_cdi_id(const char *uid, char *out, size_t len)
{
    snprintf(out, len, "%s=%s", DRA_CDI_KIND, uid);
}

json_t *dra_cdi_spec(const char *uid, json_t *node_env, json_t *created, const char *preload_file,
                     char *err, size_t errlen)
{
    json_t *cenv = json_object_get(created, "env");
    const char *dir = json_string_value(json_object_get(created, "dir"));
    const char *lib = json_string_value(json_object_get(cenv, "LD_PRELOAD"));
    if (!lib)
        lib = json_string_value(json_object_get(node_env, "LD_PRELOAD"));
    if (!dir || dir[0] != '/' || !lib || lib[0] != '/') {
        snprintf(err, errlen, "convgpud's answer names no container directory or interposer");
        return NULL;
    }
    json_t *env = json_array(), *mounts = json_array();
    int bad = !env || !mounts;
    bad = bad || cdi_add_env(env, "CONVGPU_SOCKET", CDI_IN_CONTAINER_SOCKET) ||
          cdi_add_env(env, "CONVGPU_DISABLE", "0");
    bad = bad || cdi_add_mount(mounts, dir, CDI_IN_CONTAINER_DIR, true, false) ||
          cdi_add_mount(mounts, lib, IN_CONTAINER_LIB, false, false) ||
          cdi_add_mount(mounts, preload_file, IN_CONTAINER_PRELOAD, false, false);
    /* The node's variables, then the container's (its GPU), each once. */
    json_t *merged = json_object();
    bad = bad || !merged || (node_env && json_object_update(merged, node_env)) ||
          json_object_update(merged, cenv);
    const char *key;
    json_t *v;
    json_object_foreach(merged, key, v) {
        const char *s = json_string_value(v);
        if (bad || !s || strcmp(key, "LD_PRELOAD") == 0 || strcmp(key, "CONVGPU_SOCKET") == 0 ||
            strcmp(key, "CONVGPU_DISABLE") == 0)
            continue;
        if (strcmp(key, "CONVGPU_EMU_STATE") == 0 && s[0] == '/') {
            bad = cdi_add_mount(mounts, s, CDI_IN_CONTAINER_EMU_STATE, false, true) ||
                  cdi_add_env(env, key, CDI_IN_CONTAINER_EMU_STATE);
            continue;
        }
        if (strcmp(key, "LD_LIBRARY_PATH") == 0) { /* the emulator's libraries, at their paths */
            char *copy = strdup(s), *save = NULL;
            bad = !copy;
            for (char *d = copy ? strtok_r(copy, ":", &save) : NULL; d && !bad;
                 d = strtok_r(NULL, ":", &save))
                if (d[0] == '/')
                    bad = cdi_add_mount(mounts, d, d, true, false);
            free(copy);
        }
        bad = bad || cdi_add_env(env, key, s);
    }
    json_decref(merged);
    json_t *spec = bad ? NULL
                       : json_pack("{s:s,s:s,s:[{s:s,s:{s:O,s:O}}]}", "cdiVersion", CDI_VERSION,
                                   "kind", DRA_CDI_KIND, "devices", "name", uid, "containerEdits",
                                   "env", env, "mounts", mounts);
    json_decref(env);
    json_decref(mounts);
    if (!spec)
        snprintf(err, errlen, "out of memory writing the CDI spec");
    return spec;
}
