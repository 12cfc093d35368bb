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

/* The swap mechanism of a random walk: every container moving finishes its move now and then
 * (about one in three a step, drawn with rand()), its processes first reporting what they moved
 * out (an even number of bytes when `even`, as a 2-byte granularity would). */
static inline void finish_some_moves(cg_core *core, const cg_cid *ids, int n, cg_time now,
                                     bool even)
{
    for (int j = 0; j < n; j++) {
        if (!ids[j] || rand() % 3)
            continue;
        cg_container_info ci = info(core, ids[j]);
        if (ci.residency == CG_MOVING_OUT) {
            cg_process_info ps[8];
            size_t np = cg_container_processes(core, ids[j], ps, 8);
            for (size_t k = 0; k < np && k < 8; k++)
                if (ps[k].used)
                    cg_process_swap_out(core, ids[j], ps[k].pid,
                                        even ? ps[k].used / 2 * 2 : ps[k].used, now);
            CHECK(cg_swap_out_done(core, ids[j], now) == CG_OK, "out done");
        } else if (ci.residency == CG_MOVING_IN) {
            CHECK(cg_swap_in_done(core, ids[j], now) == CG_OK, "in done");
        }
    }
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
