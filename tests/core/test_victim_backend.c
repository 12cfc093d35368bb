/* test_victim_backend.c — the back end for one victim (src/core/victim_backend.c): a table of
 * cases with the H200's 518 MiB context (one process and four), each with the choice expected
 * and why; then every combination of a grid of sizes and permissions checked against the rule's
 * invariants (the choice is allowed, frees <= moves, the bytes are the back end's, a checkpoint
 * is taken over a usable swap only when only it frees the need, none only when nothing frees),
 * and the least-moved property against both back ends computed by hand. */
#include <inttypes.h>
#include <string.h>

#include "check.h"
#include "core.h"

#define MiB (1ull << 20)
#define GiB (1ull << 30)
#define CTX (518 * MiB)

typedef struct {
    const char *why;
    cg_backend_case in;
    cg_backend want;
} row;

static const row table[] = {
    {"swap frees the need by itself: the process keeps running",
     {4 * GiB, CTX, 2 * GiB, true, true}, CG_BACKEND_SWAP},
    {"swap frees exactly the need", {2 * GiB, CTX, 2 * GiB, true, true}, CG_BACKEND_SWAP},
    {"only the checkpoint (context included) frees the need",
     {1 * GiB, CTX, 1 * GiB + 500 * MiB, true, true}, CG_BACKEND_CHECKPOINT},
    {"four processes' contexts make the difference",
     {1 * GiB, 4 * CTX, 3 * GiB, true, true}, CG_BACKEND_CHECKPOINT},
    {"the same, automatic pause not allowed: swap what it can",
     {1 * GiB, 4 * CTX, 3 * GiB, true, false}, CG_BACKEND_SWAP},
    {"neither frees enough alone: swap, the rest from the next victim",
     {1 * GiB, CTX, 4 * GiB, true, true}, CG_BACKEND_SWAP},
    {"no allocations to swap, only its context: checkpoint",
     {0, CTX, 256 * MiB, true, true}, CG_BACKEND_CHECKPOINT},
    {"swap not allowed (budget, no_swap): checkpoint frees what it can",
     {1 * GiB, CTX, 4 * GiB, false, true}, CG_BACKEND_CHECKPOINT},
    {"nothing allowed", {1 * GiB, CTX, 1 * GiB, false, false}, CG_BACKEND_NONE},
    {"nothing to free", {0, 0, 1 * GiB, true, true}, CG_BACKEND_NONE},
    {"no need: swap (least moved) when it frees anything", {1 * GiB, CTX, 0, true, true},
     CG_BACKEND_SWAP},
    {"no context charge measured: checkpoint never beats swap",
     {1 * GiB, 0, 2 * GiB, true, true}, CG_BACKEND_SWAP},
    {"saturated sum", {UINT64_MAX - 1, CTX, UINT64_MAX, true, true}, CG_BACKEND_CHECKPOINT},
};

static void invariants(const cg_backend_case *in, cg_backend_choice ch)
{
    cg_bytes whole = in->allocations + in->contexts;
    if (whole < in->allocations)
        whole = UINT64_MAX;
    CHECK(ch.frees <= ch.moves, "frees %" PRIu64 " > moves %" PRIu64, ch.frees, ch.moves);
    switch (ch.backend) {
    case CG_BACKEND_SWAP:
        CHECK(in->can_swap && in->allocations > 0);
        CHECK(ch.frees == in->allocations && ch.moves == in->allocations);
        break;
    case CG_BACKEND_CHECKPOINT:
        CHECK(in->can_checkpoint && whole > 0);
        CHECK(ch.frees == whole && ch.moves == whole);
        /* Over a usable swap only when the swap falls short and the checkpoint does not. */
        if (in->can_swap && in->allocations > 0)
            CHECK(in->allocations < in->need && whole >= in->need,
                  "checkpoint taken over a swap that frees %" PRIu64 " of %" PRIu64,
                  in->allocations, in->need);
        break;
    case CG_BACKEND_NONE:
        CHECK(!(in->can_swap && in->allocations > 0) && !(in->can_checkpoint && whole > 0));
        CHECK(ch.frees == 0 && ch.moves == 0);
        break;
    }
    /* Least moved among the back ends that free the need (when one does). */
    bool swap_ok = in->can_swap && in->allocations > 0 && in->allocations >= in->need;
    bool ckpt_ok = in->can_checkpoint && whole > 0 && whole >= in->need;
    if (swap_ok)
        CHECK(ch.backend == CG_BACKEND_SWAP);
    else if (ckpt_ok)
        CHECK(ch.backend == CG_BACKEND_CHECKPOINT);
    /* A choice that frees the need exists whenever one back end does. */
    if (swap_ok || ckpt_ok)
        CHECK(ch.frees >= in->need);
}

int main(void)
{
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
        cg_backend_choice ch = cg_victim_backend(&table[i].in);
        CHECK(ch.backend == table[i].want, "%s: got %s, want %s", table[i].why,
              cg_backend_name(ch.backend), cg_backend_name(table[i].want));
        invariants(&table[i].in, ch);
    }

    static const cg_bytes sizes[] = {0, 1, 256 * MiB, CTX, 1 * GiB, 1 * GiB + CTX, 2 * GiB,
                                     4 * CTX, 8 * GiB, UINT64_MAX - 1, UINT64_MAX};
    const size_t ns = sizeof sizes / sizeof sizes[0];
    unsigned long n = 0, swaps = 0, ckpts = 0, nones = 0;
    for (size_t a = 0; a < ns; a++)
        for (size_t c = 0; c < ns; c++)
            for (size_t w = 0; w < ns; w++)
                for (unsigned perm = 0; perm < 4; perm++) {
                    cg_backend_case in = {sizes[a], sizes[c], sizes[w], perm & 1, perm & 2};
                    cg_backend_choice ch = cg_victim_backend(&in);
                    invariants(&in, ch);
                    n++;
                    swaps += ch.backend == CG_BACKEND_SWAP;
                    ckpts += ch.backend == CG_BACKEND_CHECKPOINT;
                    nones += ch.backend == CG_BACKEND_NONE;
                }
    /* The sweep reaches every outcome (else it proves less than it seems to). */
    CHECK(swaps > 0 && ckpts > 0 && nones > 0, "swap %lu checkpoint %lu none %lu", swaps, ckpts,
          nones);
    CHECK(strcmp(cg_backend_name(CG_BACKEND_CHECKPOINT), "checkpoint") == 0);
    printf("victim_backend: %zu table rows, %lu cases swept (swap %lu, checkpoint %lu, "
           "none %lu): %s\n",
           sizeof table / sizeof table[0], n, swaps, ckpts, nones, failures ? "FAIL" : "ok");
    return failures != 0;
}
