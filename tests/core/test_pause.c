/* test_pause.c — pause, resume and move (core/pause.c): a pause needs no swap budget and gives
 * the container's whole assignment (contexts included) to whoever waits; a resume comes back
 * only through the safe offer (it waits while the memory is taken, and comes back when it is
 * freed); a move reserves all it had on the target first, or changes nothing; a restart
 * restores a paused container holding nothing. Every step keeps every invariant. */
#include "core_test.h"
#include "core.h"

#define MiB (1ull << 20)

static unsigned swap_ins[16];

static void record(void *ctx, const cg_event *ev)
{
    (void)ctx;
    if (ev->kind == CG_EV_SWAP_IN && ev->cid < 16)
        swap_ins[ev->cid]++;
}

static cg_core *mk(void)
{
    /* Swap off (no budget): a pause does not need it. Two devices of one size. */
    cg_config cfg = {.resume = CG_RESUME_FIFO, .seed = 7, .sink = record,
                     .mem_alloc = test_alloc, .mem_free = test_free};
    cg_core *core = cg_core_new(&cfg);
    CHECK(core && cg_device_add(core, 1000 * MiB, 0, 0, NULL) == CG_OK &&
              cg_device_add(core, 1000 * MiB, 0, 0, NULL) == CG_OK, "core");
    return core;
}

static cg_cid make(cg_core *core, int dev, cg_bytes limit)
{
    cg_container_spec s = {.device = dev, .limit = limit};
    cg_cid cid = CG_CID_NONE;
    CHECK(cg_container_create_spec(core, &s, 0, &cid) == CG_OK, "create");
    return cid;
}

static cg_outcome ask(cg_core *core, cg_cid cid, cg_pid pid, cg_bytes bytes)
{
    static cg_reqid req = 1;
    cg_outcome o = CG_REJECTED;
    CHECK(cg_request(core, cid, pid, req++, bytes, 0, &o) == CG_OK, "request");
    return o;
}

/* The daemon's part of a pause: every process reports all of its use. */
static void checkpointed(cg_core *core, cg_cid cid)
{
    cg_process_info ps[8];
    size_t n = cg_container_processes(core, cid, ps, 8);
    for (size_t i = 0; i < n; i++)
        CHECK(cg_process_swap_out(core, cid, ps[i].pid, ps[i].used, 1) == CG_OK, "moved");
    CHECK(cg_swap_out_done(core, cid, 1) == CG_OK, "out");
}

int main(void)
{
    cg_core *core = mk();
    cg_cid a = make(core, 0, 600 * MiB), b = make(core, 0, 600 * MiB);
    CHECK(ask(core, a, 1, 600 * MiB) == CG_GRANTED, "a runs");
    CHECK(ask(core, b, 2, 600 * MiB) == CG_SUSPENDED, "b waits");
    CHECK_CORE(core);

    /* Pause a: no budget needed; its whole assignment goes to b. */
    CHECK(cg_pause(core, a, 1) == CG_OK, "pause");
    CHECK(cg_paused(core, a) && info(core, a).residency == CG_MOVING_OUT, "pausing");
    CHECK(cg_pause(core, a, 1) == CG_ERR_STATE, "paused twice");
    CHECK(cg_pause_resume(core, a, 1) == CG_ERR_STATE, "resumed while pausing");
    CHECK_CORE(core);
    checkpointed(core, a);
    CHECK(info(core, a).assigned == 0 && info(core, a).used == 0, "a holds nothing");
    CHECK(info(core, a).limit == 600 * MiB, "its limit stays");
    CHECK(info(core, b).used == 600 * MiB, "b got the memory");
    CHECK_CORE(core);

    /* Move: refused onto its own device, onto a device without room (nothing changes). */
    CHECK(cg_pause_move(core, a, 0, 1) == CG_ERR_STATE, "same device");
    CHECK(cg_pause_move(core, a, 7, 1) == CG_ERR_NO_DEVICE, "no such device");
    cg_cid c = make(core, 1, 500 * MiB);
    CHECK(ask(core, c, 3, 500 * MiB) == CG_GRANTED, "c on device 1");
    CHECK(cg_pause_move(core, a, 1, 1) == CG_ERR_NOT_FREE, "no room on 1");
    CHECK(info(core, a).device == 0 && cg_paused(core, a) && swap_ins[a] == 0, "unchanged");
    CHECK_CORE(core);
    CHECK(cg_container_remove(core, c, 1) == CG_OK, "c gone");

    /* Now it fits: reserved on device 1 and ordered in at once. */
    CHECK(cg_pause_move(core, a, 1, 1) == CG_OK, "move");
    CHECK(info(core, a).device == 1 && info(core, a).assigned == 600 * MiB, "reserved there");
    CHECK(swap_ins[a] == 1 && info(core, a).residency == CG_MOVING_IN, "ordered in");
    CHECK_CORE(core);
    CHECK(cg_pause_in_done(core, a, 1) == CG_OK, "restored");
    CHECK(!cg_paused(core, a) && info(core, a).residency == CG_RESIDENT, "running on 1");
    CHECK(info(core, a).used == 600 * MiB, "its use is back");
    CHECK_CORE(core);

    /* Resume waits while the memory is taken, and comes back when it is freed. */
    CHECK(cg_pause(core, a, 2) == CG_OK, "pause again");
    checkpointed(core, a);
    cg_cid d = make(core, 1, 500 * MiB);
    CHECK(ask(core, d, 4, 500 * MiB) == CG_GRANTED, "d takes device 1");
    CHECK(cg_pause_resume(core, a, 2) == CG_OK, "resume asked");
    CHECK(swap_ins[a] == 1 && info(core, a).residency == CG_SWAPPED_OUT, "still out");
    CHECK(cg_pause_move(core, a, 0, 2) == CG_ERR_STATE, "no move once resuming");
    CHECK_CORE(core);
    CHECK(cg_container_remove(core, d, 3) == CG_OK, "d gone");
    CHECK(swap_ins[a] == 2 && info(core, a).residency == CG_MOVING_IN, "back in");
    CHECK(cg_pause_in_done(core, a, 3) == CG_OK, "restored");
    CHECK_CORE(core);

    /* Removing a paused container forgets it. */
    CHECK(cg_pause(core, a, 4) == CG_OK, "pause");
    checkpointed(core, a);
    CHECK(cg_container_remove(core, a, 4) == CG_OK, "removed");
    CHECK_CORE(core);

    /* A restart: the process's bytes on the host, the container paused, holding nothing. */
    cg_cid e = make(core, 1, 300 * MiB);
    CHECK(cg_process_set_use(core, e, 9, 0, 5) == CG_OK, "process known");
    CHECK(cg_process_restore_swapped(core, e, 9, 200 * MiB) == CG_OK, "bytes on host");
    CHECK(cg_pause_restore(core, e, 5) == CG_OK, "restored paused");
    CHECK(cg_paused(core, e) && info(core, e).assigned == 0, "holds nothing");
    CHECK_CORE(core);
    CHECK(cg_pause_resume(core, e, 6) == CG_OK && swap_ins[e] == 1, "resumes");
    CHECK(cg_pause_in_done(core, e, 6) == CG_OK && info(core, e).used == 200 * MiB, "back");
    CHECK_CORE(core);
    cg_core_free(core);
    printf("ok\n");
    return 0;
}
