/* client.h — this process's one connection to the daemon and its slot in the container ledger.
 *
 * The session (connection + WELCOME + mapped ledger + our slot) is opened on first need and
 * reopened after a daemon restart (HELLO with CG_HELLO_RECONNECT, same slot). Requests from
 * several threads share the connection; each blocks only its own thread, and no lock is held
 * while anyone waits in recv, so frees and fast-path charges never wait behind a suspended
 * request. */
#ifndef CONVGPU_IP_CLIENT_H
#define CONVGPU_IP_CLIENT_H

#include "ledger.h"

#include <stdbool.h>
#include <stdint.h>

#define CG_REQ_TIMEOUT (-1) /* the daemon stayed unreachable for CONVGPU_DAEMON_TIMEOUT */

struct cg_session {
    struct cg_ledger *ledger;
    struct cg_ledger_slot *slot;
    uint64_t granularity; /* >= CG_LEDGER_PAGE */
};

/* A container on several GPUs has one session per GPU ("member" k: CUDA ordinal k, socket k;
 * the daemon's gang.c); a container on one GPU has member 0 only. */
#define CG_IP_MEMBERS 64

int cg_client_setup(void);

/* Member m's session without waiting (false: none yet). Lock-free. */
bool cg_session_get_on(unsigned m, struct cg_session *s);

/* Opens member m's session if needed, waiting up to `wait_s` seconds for an unreachable
 * daemon. */
bool cg_session_open_on(unsigned m, double wait_s, struct cg_session *s);

/* The container's GPUs as member 0's WELCOME said (0: no session yet). Lock-free. */
extern _Atomic unsigned cg_client_nmembers;
static inline unsigned cg_client_members(void)
{
    return atomic_load_explicit(&cg_client_nmembers, memory_order_acquire);
}

/* The member the calling thread's allocations go to: its current context's device (account.c);
 * 0 in a container on one GPU; CG_MEMBER_NONE for a device the container does not have. Inline
 * because every gate pass and charge asks: a container on one GPU pays one load. */
#define CG_MEMBER_NONE 0xffffffffu
/* cg_alloc_member: the daemon stayed unreachable (the charge fails without waiting again). */
#define CG_MEMBER_UNREACHABLE 0xfffffffeu
unsigned cg_member_several(void);
static inline unsigned cg_member(void)
{
    return __builtin_expect(cg_client_members() <= 1, 1) ? 0 : cg_member_several();
}

/* The current member's session (what gates and accounts read). */
static inline bool cg_session_get(struct cg_session *s)
{
    return cg_session_get_on(cg_member(), s);
}

/* Asks the daemon for `bytes` (rounded, > 0) on member m. Returns a CG_ALLOC_* status or
 * CG_REQ_TIMEOUT. On CG_ALLOC_GRANTED the daemon has already charged our slot. Blocks this
 * thread only. */
int cg_client_request(unsigned m, uint64_t bytes);

/* Use went down on member m while requests of its container wait: tell the daemon (never
 * blocks). */
void cg_client_notify_freed(unsigned m);

/* This process reported its part of a swap order in the ledger: tell the daemon, so that it
 * ends the move at once rather than at its next poll (never blocks; a lost notice only delays).
 * A container that swaps has one GPU: the notice goes on member 0's socket. */
void cg_client_notify_swapped(void);

void cg_client_fork_prepare(void);
void cg_client_fork_parent(void);
void cg_client_fork_child(void);

#endif
