/* alloctab.h — the live allocations of this process and what each was charged.
 *
 * Keyed by (space, key): device pointers, VMM handles, arrays and mipmapped arrays live in
 * separate key spaces so a handle value can never be mistaken for a pointer. A free takes its
 * entry out *before* the driver call (and puts it back if the call fails), so an address the
 * driver hands out again meanwhile can never lose its own entry. */
#ifndef CONVGPU_IP_ALLOCTAB_H
#define CONVGPU_IP_ALLOCTAB_H

#include <stdbool.h>
#include <stdint.h>

enum cg_space { CG_SPACE_PTR = 1, CG_SPACE_HANDLE = 2, CG_SPACE_ARRAY = 3, CG_SPACE_MIPMAP = 4 };

struct cg_alloc {
    uint64_t key;
    uint64_t bytes; /* charged to our slot for this allocation (0: charged through its pool) */
    void *pool;     /* stream-ordered allocations: their pool */
    uint64_t swap;  /* swappable allocations: their record (swap.h); 0 = none */
    uint32_t space; /* 0 = empty entry */
    uint32_t member; /* the container's GPU it was charged to (client.h) */
};

/* 0, or -1 when the table cannot grow (the caller then undoes the allocation). */
int cg_alloc_put(uint32_t space, uint64_t key, uint64_t bytes, void *pool, unsigned member);
/* The same for a swappable allocation (`swap`: its record in swap.c). */
int cg_alloc_put_swap(uint64_t key, uint64_t bytes, uint64_t swap);
/* Puts back an entry cg_alloc_take removed, as it was (its driver call failed). */
void cg_alloc_put_back(const struct cg_alloc *a);
/* Removes and returns the entry; false when unknown. */
bool cg_alloc_take(uint32_t space, uint64_t key, struct cg_alloc *out);
uint64_t cg_alloc_count(void);

void cg_alloc_fork_prepare(void);
void cg_alloc_fork_parent(void);
void cg_alloc_fork_child(void);

#endif
