/* node_gpus.h — a node's `convgpu.io/gpus` annotation decoded into the GPUs the core fits pods
 * on. The annotation is written by `convgpu k8s publish` on the node, but it reaches the
 * extender through the API server, where anyone allowed to edit Nodes can write anything: it is
 * input, checked here, and a node whose annotation is missing or malformed is failed with the
 * reason, never kept.
 *
 *   [{"index":0,"uuid":"GPU-...","memory_units":{"total":T,"free":F,"max":M},
 *     "compute_units":{"total":100,"free":F},"unit_bytes":268435456}, ...]
 *
 * Checked: a JSON array of at most CG_CLUSTER_MAX_GPUS objects, at most 64 KiB; index a distinct
 * integer 0..1023; uuid a string; totals and frees integers with 0 <= free <= total <=
 * CG_CLUSTER_MAX_UNITS; unit_bytes a positive integer; an optional max (a GPU that promises more
 * memory than it has: its own, the most one pod may take of it) an integer 0..total, and the
 * free units a pod may count on are then at most max. Other fields are ignored, so a newer
 * publisher may add some.
 *
 * Optional, per GPU (the publisher's annotation.h; absent: the GPU has no pressure and ranks by
 * units alone, as from a publisher before them):
 *   "pressure": {"capacity": B, "free": B, "waiting": N, "waiting_since": S, "swap_left": B,
 *                "compute_load_pct": P}   integers, 0 <= free <= capacity, waiting <= 100000,
 *                P <= 100, S >= 0 (Unix seconds; a time after now counts as no wait);
 *   "apps": {"KEY": SLOWDOWN, ...}        numbers 0 < SLOWDOWN < 1000, at most 64 keys;
 * decoded into the GPU's cg_gpu_pressure for this pod: waited_s = now - waiting_since when
 * someone waits, slowdown_milli = apps[app] x 1000 when the pod names its app and the GPU has a
 * row for it. */
#ifndef CONVGPU_K8S_EXT_NODE_GPUS_H
#define CONVGPU_K8S_EXT_NODE_GPUS_H

#include <stddef.h>
#include <stdint.h>

#include "cluster_fit.h"

#define K8S_GPUS_ANNOTATION "convgpu.io/gpus"
#define K8S_GPUS_MAX_BYTES (64 * 1024)

/* Decodes text (len bytes) into gpus[0..*n). Returns 0, or -1 with err saying what is wrong. */
int k8s_node_gpus_decode(const char *text, size_t len, const char *app, int64_t now,
                         cg_cluster_gpu gpus[CG_CLUSTER_MAX_GPUS], size_t *n, char *err,
                         size_t errlen);

#endif
