/* annotation.h — this node's `convgpu.io/gpus` annotation, computed from convgpud's own view:
 * what the scheduler extender (src/integrations/k8s/extender) reads to know, per GPU, how many
 * convgpu units are free.
 *
 * Follow one publish: `convgpu k8s publish` GETs /v1/devices and /v1/containers from convgpud,
 * this file turns them into
 *
 *   [{"index":I,"uuid":"GPU-...","memory_units":{"total":T,"free":F,"max":M},
 *     "compute_units":{"total":100,"free":C},"unit_bytes":U,
 *     "pressure":{"capacity":B,"free":B,"waiting":N,"waiting_since":S,"swap_left":B,
 *                 "compute_load_pct":P},
 *     "apps":{"KEY":SLOWDOWN, ...}}, ...]
 *
 * and patch.c PATCHes it onto the Node. Units are the device plugin's: memory units of U bytes
 * (256 MiB unless --memory-unit says otherwise; it must match the plugin's flag), 1% compute
 * units, 100 per GPU.
 *
 *   memory total = promised / U                              (rounded down, as the plugin does)
 *   memory free  = (promised - sum of the GPU's containers' limits) / U    (down; 0 if negative)
 *   memory max   = capacity / U        (the most one container may take of the GPU; down)
 *   compute free = 100 - sum of the GPU's containers' compute shares       (0 if negative)
 *
 * promised is the daemon's (capacity x the GPU's sharing factor, convgpud --oversubscribe; the
 * capacity from a daemon before it).
 * Limits, not use: a container's limit is promised to it whether or not it has allocated it
 * yet, and the device plugin hands out units of limit.
 *
 * "pressure" is the GPU's live state, which units cannot show (src/core/pressure.h says what
 * the extender makes of it): capacity and free are the device's physical bytes and those not
 * assigned to any container; waiting counts its containers waiting for memory (suspended, or
 * swapped out with requests pending) and waiting_since is when the oldest of them began to
 * wait, in Unix seconds from the publisher's clock (0: none), so that the annotation does not
 * change every second while someone waits; swap_left is the node's swap budget not taken
 * (0 from a daemon that does not say); compute_load_pct the measured utilisation, rounded to
 * tens for the same reason.
 * "apps" weighs seed 003's interference matrix (the rows `convgpu interfere --save` stored,
 * every tenant's): for each application key K the matrix names, the worst slowdown of K beside
 * any container on the GPU whose profile key the matrix pairs with it, either way round (K
 * slowed by it, or it by K). Keys without such a pair are left out; at most K8S_APPS_MAX per
 * GPU, the worst first. Rounding down never shows a unit that
 * is not entirely there. The containers must be all of them: the publisher runs as root (or
 * as the daemon's user), to whom /v1/containers lists every container. */
#ifndef CONVGPU_K8S_PUBLISH_ANNOTATION_H
#define CONVGPU_K8S_PUBLISH_ANNOTATION_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#define K8S_DEFAULT_UNIT_BYTES (256ull << 20)
#define K8S_APPS_MAX 16

/* devices: /v1/devices' answer; containers: /v1/containers'; interference: /v1/interference's
 * rows (NULL: none, as from a daemon that has no such route); now: the publisher's clock, Unix
 * seconds. Returns the annotation's JSON array (new reference), or NULL with err saying which
 * field of the daemon's answer is wrong. */
json_t *k8s_annotation_build(const json_t *devices, const json_t *containers,
                             const json_t *interference, double now, uint64_t unit_bytes,
                             char *err, size_t errlen);

#endif
