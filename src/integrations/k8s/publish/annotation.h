/* annotation.h — this node's `convgpu.io/gpus` annotation, computed from convgpud's own view:
 * what the scheduler extender (src/integrations/k8s/extender) reads to know, per GPU, how many
 * convgpu units are free.
 *
 * Follow one publish: `convgpu k8s publish` GETs /v1/devices and /v1/containers from convgpud,
 * this file turns them into
 *
 *   [{"index":I,"uuid":"GPU-...","memory_units":{"total":T,"free":F,"max":M},
 *     "compute_units":{"total":100,"free":C},"unit_bytes":U}, ...]
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
 * yet, and the device plugin hands out units of limit. Rounding down never shows a unit that
 * is not entirely there. The containers must be all of them: the publisher runs as root (or
 * as the daemon's user), to whom /v1/containers lists every container. */
#ifndef CONVGPU_K8S_PUBLISH_ANNOTATION_H
#define CONVGPU_K8S_PUBLISH_ANNOTATION_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#define K8S_DEFAULT_UNIT_BYTES (256ull << 20)

/* devices: /v1/devices' answer; containers: /v1/containers'. Returns the annotation's JSON
 * array (new reference), or NULL with err saying which field of the daemon's answer is wrong. */
json_t *k8s_annotation_build(const json_t *devices, const json_t *containers,
                             uint64_t unit_bytes, char *err, size_t errlen);

#endif
