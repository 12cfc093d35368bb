/* topology.h — the node's GPU wiring as the daemon learns it from NVML at start (the common
 * PCIe ancestor of every pair, and NVLinks matched by their far end's PCI bus id), handed to
 * the core with cg_topology_set, and shown on GET /v1/devices. */
#ifndef CONVGPUD_TOPOLOGY_H
#define CONVGPUD_TOPOLOGY_H

#include <jansson.h>

struct daemon;

/* After the devices are registered with the core. Where NVML lacks the calls (an old driver,
 * a vGPU) it logs once and leaves the core's default (every pair SYSTEM); never fatal. */
void topology_read(struct daemon *d);

/* Adds device i's links to its JSON object: "topology": {"<peer>": "<level>", ...} for every
 * other device, and "nvlinks": {"<peer>": <count>, ...} for those joined by NVLink. */
void topology_json_add(const struct daemon *d, unsigned i, json_t *obj);

#endif
