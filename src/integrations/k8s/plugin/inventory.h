/* inventory.h — convgpud's GET /v1/devices answer turned into the plugin's inventory, and the
 * inventory carried across reads (a GPU once seen stays, absent while the daemon does not list
 * it). No I/O: unit-tested directly. */
#ifndef CONVGPU_K8S_INVENTORY_H
#define CONVGPU_K8S_INVENTORY_H

#include <jansson.h>

#include "plugin.h"

/* Reads the devices array: each entry an object with an integer "index" (0..CG_UNIT_MAX_GPU, no
 * repeats), a string "uuid", a non-negative integer "capacity" and, optionally, an integer
 * "promised" >= capacity (absent: the capacity). Returns 0, or -1 with err for anything else;
 * then *out is unchanged. */
int dp_inventory_parse(json_t *devices, struct dp_inventory *out, char *err, size_t errlen);

/* What the plugin knows after a read: fresh's GPUs (present) plus prev's GPUs that fresh lacks
 * (absent, their capacity kept). fresh NULL: the daemon was unreachable, every GPU absent. */
void dp_inventory_merge(const struct dp_inventory *prev, const struct dp_inventory *fresh,
                        struct dp_inventory *out);

/* Whether two inventories would make the same ListAndWatch answer and the same Allocate. */
int dp_inventory_equal(const struct dp_inventory *a, const struct dp_inventory *b);

#endif
