/* fdbudget.h — fitting the daemon's connection bounds inside its descriptor limit. Every
 * connection, container socket, ledger and record is a descriptor; when the bounds allow more
 * than the limit, the late-comer (another tenant's new process, a create, the control API) is
 * the one that fails. The plan is made once at start, from the limit and the settings, and what
 * does not fit is said with the numbers. Pure: tests/security/test_api_conns.c checks it. */
#ifndef CONVGPUD_FDBUDGET_H
#define CONVGPUD_FDBUDGET_H

#include <stddef.h>

/* Descriptors kept for the daemon itself (store, GPUs, signals, epoll, logs, metrics)... */
#define FDBUDGET_DAEMON 64u
/* ...and for this many containers' own files (socket, ledger, record, owner's pidfd). */
#define FDBUDGET_CONTAINERS 256u
#define FDBUDGET_PER_CONTAINER 4u

struct fdbudget {
    unsigned long nofile;          /* the process's descriptor limit */
    unsigned api_max_connections;  /* control API, in all */
    unsigned max_client_connections; /* container sockets, in all (0: derive) */
    unsigned user_max_connections; /* container sockets, per owner (0: derive) */
};

/* Fills the derived bounds (a zero max_client_connections or user_max_connections) and checks
 * that everything fits. Returns 0 when it does; 1 with `warning` set (the numbers, and what to
 * change) when it does not: the daemon starts anyway and says so. */
int fdbudget_plan(struct fdbudget *b, char *warning, size_t len);

#endif
