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

int cg_client_setup(void);

/* The current session without waiting (false: none yet). Lock-free. */
bool cg_session_get(struct cg_session *s);

/* Opens the session if needed, waiting up to `wait_s` seconds for an unreachable daemon. */
bool cg_session_open(double wait_s, struct cg_session *s);

/* Asks the daemon for `bytes` (rounded, > 0). Returns a CG_ALLOC_* status or CG_REQ_TIMEOUT.
 * On CG_ALLOC_GRANTED the daemon has already charged our slot. Blocks this thread only. */
int cg_client_request(uint64_t bytes);

/* Use went down while requests of this container wait: tell the daemon (never blocks). */
void cg_client_notify_freed(void);

void cg_client_fork_prepare(void);
void cg_client_fork_parent(void);
void cg_client_fork_child(void);

#endif
