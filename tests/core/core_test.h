/* core_test.h — what the core's C tests share on top of check.h: every invariant checked after
 * a step (CHECK_CORE), a container's view that must exist (info), and an allocator that fails
 * at a chosen call (fault injection: cg_config.mem_alloc/mem_free). Header-only. */
#ifndef CONVGPU_CORE_TEST_H
#define CONVGPU_CORE_TEST_H

#include <stdlib.h>

#include "check.h"
#include "core.h"

#define CHECK_CORE(core)                                                                     \
    do {                                                                                     \
        const char *why_ = cg_core_check(core);                                              \
        CHECK(why_ == NULL, "invariant: %s", why_ ? why_ : "");                              \
    } while (0)

static inline cg_container_info info(const cg_core *core, cg_cid cid)
{
    cg_container_info ci = {0};
    CHECK(cg_container_get(core, cid, 0, &ci) == CG_OK, "container %u", cid);
    return ci;
}

static int fail_at = -1; /* allocation number that fails (-1: none) */
static int nalloc;
static inline void *test_alloc(void *ctx, size_t n)
{
    (void)ctx;
    return nalloc++ == fail_at ? NULL : malloc(n);
}
static inline void test_free(void *ctx, void *p)
{
    (void)ctx;
    free(p);
}

#endif
