/* pause.h — whole-container pause, resume and move through the driver's process checkpoint API
 * (docs/PAUSE.md); the books are the core's (core/pause.c), the hands a helper program.
 *
 * Follow one pause: `convgpu pause ID` -> POST /v1/containers/ID/pause -> pause_request: the
 * driver is probed once (convgpu-checkpoint probe; a driver without the API is refused with
 * 501, or swapped out instead when --pause-fallback swap), the phase PAUSING is stored, the
 * slots frozen and cg_pause asks the core, which orders the container out (CG_EV_SWAP_OUT);
 * the sink hands that to pause_carry_out: CG_GATE_PAUSED goes up in the ledger (no hooked
 * launch, allocation or free starts, none asks the daemon anything), and the helper locks and
 * checkpoints every process of the container (all or nothing). The loop sees the helper end;
 * the phase PAUSED is stored first, then each process's whole use is reported to the core and
 * the move ended: the container holds nothing on the device, its limit stays, its memory goes
 * to whoever waits. A resume (POST .../resume) ends the hold; the core gives the container its
 * memory back through the safe offer and orders it in (CG_EV_SWAP_IN): RESUMING is stored, the
 * helper restores and unlocks every process, then the gate opens and the core is told. A move
 * (POST .../move {"device":N}) pauses first if needed, then reserves all it had on device N
 * (refused across models, or when N has not that much free and safe), and resumes there.
 *
 * Restart safety (a daemon killed at any point): PAUSING or RESUMING found in state.db means
 * the core never let go of the memory (PAUSED is stored before it does) or already reserved it
 * back (RESUMING is stored after it did): the restarted daemon finishes bringing every process
 * back to running (the helper's resume is idempotent) and restores the container running, its
 * use charged once from its slots. PAUSED: every process is checkpointed; the container is
 * restored paused, its processes' use on the host, nothing on the device. So it ends paused or
 * running, nothing lost, nothing charged twice.
 *
 * Invariant: CG_GATE_PAUSED is up from before the first lock until after the last unlock. */
#ifndef CONVGPUD_PAUSE_H
#define CONVGPUD_PAUSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct daemon;
struct container;
struct stored_container;

enum pause_phase { PAUSE_NONE = 0, PAUSE_PAUSING, PAUSE_PAUSED, PAUSE_RESUMING };

struct pause_state {
    enum pause_phase phase;
    bool moved;            /* checkpointed on from_dev, to be restored on c->device */
    unsigned from_dev;
    bool move_asked;       /* a move asked of a running container: to move_to once paused */
    unsigned move_to;
    bool out_due;          /* the core ordered it out; pause_flush starts the checkpoint */
    bool automatic;        /* the scheduler's checkpoint of a victim (--auto-pause): nobody
                            * holds it, it comes back by itself */
    bool in_due;           /* the core ordered it back in; pause_flush starts the restore */
    bool resume_asked;     /* restored paused with a resume asked before the restart */
    bool busy;             /* a helper runs for it */
    bool retry;            /* its restore failed: the next resume request tries again */
    uint64_t since;        /* monotonic ns: the current step began */
    uint64_t out_ns, in_ns; /* how long the last pause and resume took */
    uint64_t bytes;        /* its processes' use when paused */
    unsigned pauses;       /* completed pauses, since creation */
    char error[256];       /* the last failure ("" none) */
    bool stop_seen;        /* follow_stop.c saw all its processes stopped (follow_stop.h) */
    bool stop_refused;     /* ... and its pause was refused: not asked again until they run */
};

/* What a pause request became: 0 pausing, PAUSE_SWAPPING (the fallback swapped it out
 * instead), or an HTTP status with err: 409 (state), 501 (no checkpoint API), 503/507 (the
 * state could not be stored). */
#define PAUSE_SWAPPING 1
int pause_request(struct daemon *d, struct container *c, char *err, size_t errlen);
/* 0 resuming (or already), else 409 with err. */
int pause_resume_request(struct daemon *d, struct container *c, char *err, size_t errlen);
/* 0 moving, else 400 (no such device), 409 (state, another model, not free), 501, 503/507. */
int pause_move_request(struct daemon *d, struct container *c, int dev, char *err,
                       size_t errlen);

/* From the core's decision sink (no core calls): true when the order is a pause's and was
 * taken here. */
bool pause_carry_out(struct daemon *d, struct container *c);
/* --auto-pause yes and a driver with the checkpoint API (probed once): the core may
 * checkpoint victims (cg_config.auto_pause). */
bool pause_auto_available(struct daemon *d);
bool pause_mark_in(struct container *c);
/* After a core call returned: starts the restores the core ordered. */
void pause_flush(struct daemon *d);

/* A restart, before c's processes' accounts are restored (restore.c): PAUSING or RESUMING is
 * finished (every process back to running) and forgotten; PAUSED is remembered. */
void pause_recover(struct daemon *d, struct container *c, const struct stored_container *sc);
/* Whether c's processes' use is on the host (restore their accounts with pause_adopt). */
bool pause_restoring_paused(const struct container *c);
/* Restart: process key `key` of paused c had `used` on the device, now on the host. */
void pause_adopt(struct daemon *d, struct container *c, uint64_t key, uint64_t used);
/* Restart: after the accounts, c's books go paused. */
void pause_restored(struct daemon *d, struct container *c);

const char *pause_phase_name(enum pause_phase p);
/* What ps and the API show: the phase, "resuming" for a paused container asked back that
 * waits for its memory. */
const char *pause_state_name(struct daemon *d, const struct container *c);

/* What main.c gives decide.c (d->swap_ops): a pause's orders here, a swap's on to swap.c. */
struct decide_swap_ops;
extern const struct decide_swap_ops pause_for_decide;

#endif
