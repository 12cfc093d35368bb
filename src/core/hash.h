/* hash.h — an open-addressing hash map from a pair of 64-bit keys to a pointer.
 *
 * The core looks up containers by cid, processes by (cid, pid) and suspended requests by
 * (cid, req). Growth is separated from insertion (cg_hash_reserve) so that an operation can
 * secure all the memory it needs before it changes anything: inserts after a successful
 * reserve cannot fail.
 */
#ifndef CONVGPU_CORE_HASH_H
#define CONVGPU_CORE_HASH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct cg_core;

typedef struct {
    uint64_t k1, k2;
    void *val;                   /* NULL marks an empty slot */
} cg_hash_slot;

typedef struct {
    cg_hash_slot *slots;
    size_t cap;                  /* power of two, or 0 */
    size_t len;
} cg_hash;

/* Makes room for `extra` more entries; false (map unchanged) when memory is short. */
bool cg_hash_reserve(struct cg_core *core, cg_hash *h, size_t extra);
/* Inserts a key that is not present; room must have been reserved. */
void cg_hash_put(cg_hash *h, uint64_t k1, uint64_t k2, void *val);
void *cg_hash_get(const cg_hash *h, uint64_t k1, uint64_t k2);
/* Removes a key if present; returns its value or NULL. */
void *cg_hash_del(cg_hash *h, uint64_t k1, uint64_t k2);
void cg_hash_release(struct cg_core *core, cg_hash *h);

#endif
