/* test_victim_backend.c — the back end for one victim (src/core/victim_backend.c): a table of
 * cases with the H200's 518 MiB context (one process and four), each with the choice expected
 * and why; then every combination of a grid of sizes and permissions checked against the rule's
 * invariants (the choice is allowed, frees <= moves, the bytes are the back end's, a checkpoint
 * is taken over a usable swap only when only it frees the need, none only when nothing frees),
 * and the least-moved property against both back ends computed by hand. Then the rule inside the
 * scheduler's victim search (swap.c, cg_config.auto_pause): a victim whose allocations free too
 * little is checkpointed whole when automatic pause is on, comes back by itself once the memory
 * is free, and is left alone (the waiter waits) when it is off; every invariant after each step. */
#include <inttypes.h>
#include <string.h>

#include "core_test.h"
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

static unsigned outs, ins;
static cg_reqid out_req;

static void record(void *ctx, const cg_event *ev)
{
    (void)ctx;
    if (ev->kind == CG_EV_SWAP_OUT && ev->reason == CG_WHY_VICTIM) {
        outs++;
        out_req = ev->req;
    }
    if (ev->kind == CG_EV_SWAP_IN)
        ins++;
}

/* A 4000 MiB device with a 500 MiB context charge; a (priority 0) holds 200 MiB of allocations
 * beside its context, b (priority 5) asks for 3200 MiB: 400 MiB short. Swapping a frees 200 MiB
 * (not enough); checkpointing it frees 700 MiB. */
static void in_the_scheduler(bool auto_pause)
{
    outs = ins = 0;
    cg_config cfg = {.resume = CG_RESUME_FIFO, .seed = 3, .sink = record,
                     .mem_alloc = test_alloc, .mem_free = test_free,
                     .swap_limit = 8 * GiB, .auto_pause = auto_pause};
    cg_core *core = cg_core_new(&cfg);
    CHECK(core && cg_device_add(core, 4000 * MiB, 0, 500 * MiB, NULL) == CG_OK, "core");
    cg_container_spec sa = {.device = 0, .limit = 1000 * MiB, .priority = 0};
    cg_container_spec sb = {.device = 0, .limit = 3800 * MiB, .priority = 5};
    cg_cid a = CG_CID_NONE, b = CG_CID_NONE;
    CHECK(cg_container_create_spec(core, &sa, 0, &a) == CG_OK &&
              cg_container_create_spec(core, &sb, 0, &b) == CG_OK, "create");
    cg_outcome o = CG_REJECTED;
    CHECK(cg_request(core, a, 1, 1, 200 * MiB, 0, &o) == CG_OK && o == CG_GRANTED, "a runs");
    CHECK(info(core, a).used == 700 * MiB, "a: 200 MiB + its context, used %" PRIu64,
          info(core, a).used);
    CHECK(cg_request(core, b, 2, 2, 3200 * MiB, 1, &o) == CG_OK && o == CG_SUSPENDED, "b waits");
    CHECK_CORE(core);
    if (!auto_pause) {
        CHECK(outs == 0 && !cg_paused(core, a), "off: no victim, a swap would free too little");
        CHECK(info(core, a).residency == CG_RESIDENT, "a runs on");
        cg_core_free(core);
        return;
    }
    CHECK(outs == 1 && out_req == 2, "a checkpointed for b's request (outs %u)", outs);
    CHECK(cg_paused(core, a) && info(core, a).residency == CG_MOVING_OUT, "a pausing");
    CHECK_CORE(core);
    /* The carrier's part: the process reports all of its use, context included. */
    CHECK(cg_process_swap_out(core, a, 1, 700 * MiB, 2) == CG_OK, "a's process moved");
    CHECK(cg_swap_out_done(core, a, 2) == CG_OK, "a out");
    /* Nothing of a on the device; what the resume pass may reserve for it meanwhile is only
     * what b left free (it comes back when all 700 MiB are reserved, safely). */
    CHECK(info(core, a).used == 0 && info(core, a).swapped == 700 * MiB,
          "a: used %" PRIu64 ", on the host %" PRIu64, info(core, a).used, info(core, a).swapped);
    CHECK(info(core, b).used >= 3200 * MiB, "b granted (used %" PRIu64 ")", info(core, b).used);
    CHECK(ins == 0, "a stays out while b holds the memory");
    CHECK_CORE(core);
    /* b ends: a comes back through the resume pass by itself (nobody holds it). */
    CHECK(cg_container_remove(core, b, 3) == CG_OK, "b gone");
    CHECK(ins == 1 && info(core, a).residency == CG_MOVING_IN, "a ordered back in");
    CHECK_CORE(core);
    CHECK(cg_pause_in_done(core, a, 4) == CG_OK, "a restored");
    CHECK(!cg_paused(core, a) && info(core, a).residency == CG_RESIDENT, "a runs again");
    CHECK(info(core, a).used == 700 * MiB, "every byte charged back once");
    CHECK_CORE(core);
    cg_core_free(core);
}

int main(void)
{
    in_the_scheduler(false);
    in_the_scheduler(true);

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
