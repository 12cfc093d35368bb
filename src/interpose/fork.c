/* fork.c — fork(): the child is a new process to the daemon.
 *
 * Before fork we take every interposer lock (always in the same order: client, pools, table)
 * so no lock is copied into the child held by a thread that does not exist there. The child
 * then drops the parent's connection, ledger slot, pool accounts and allocation table -- those
 * are the parent's charges -- and opens its own session on first use. Child handlers use only
 * async-signal-safe calls (close, munmap), never malloc. exec needs nothing: every descriptor
 * we own is close-on-exec. */
#include "fork.h"
#include "alloctab.h"
#include "client.h"
#include "pool.h"
#include "swap.h"

#include <pthread.h>

static void prepare(void)
{
    cg_client_fork_prepare();
    cg_pool_fork_prepare();
    cg_alloc_fork_prepare();
    cg_swap_fork_prepare();
}

static void parent(void)
{
    cg_swap_fork_parent();
    cg_alloc_fork_parent();
    cg_pool_fork_parent();
    cg_client_fork_parent();
}

static void child(void)
{
    cg_swap_fork_child();
    cg_alloc_fork_child();
    cg_pool_fork_child();
    cg_client_fork_child();
}

int cg_fork_setup(void)
{
    return pthread_atfork(prepare, parent, child) == 0 ? 0 : -1;
}
