/* api_conn.h — the control socket's connections as the daemon accounts for them: who holds each
 * (SO_PEERCRED, read once at accept), the bounds per user and in all, and the deadline by which
 * a request must have arrived. Bookkeeping only: no socket is read or written here, so every rule
 * is checked by tests/security/test_api_conns.c without a daemon.
 *
 * The rules (docs/SECURITY.md, "The control socket under hostile clients"):
 * - Everyone but root, the daemon's user and operators ("tenants") holds at most
 *   `per_user` connections and `per_user_followers` event streams.
 * - Tenants together hold at most `total - reserve` connections and `followers -
 *   followers_reserve` streams: the rest is kept for root and operators, so the OCI shim's, the
 *   Slurm plugin's and the device plugin's registrations always get in.
 * - When the tenants' share is full, a tenant holding fewer than the heaviest tenant minus one
 *   still gets in: the heaviest tenant's oldest connection that is waiting for a request is cut.
 *   So no set of tenants can keep another out by holding connections.
 * - A connection must deliver its request within `request_timeout_ns` of being accepted or of
 *   its previous answer, however slowly it trickles bytes; a request being answered and an
 *   event stream have no deadline. */
#ifndef CONVGPUD_API_CONN_H
#define CONVGPUD_API_CONN_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include "uidcount.h"

/* Of api-max-connections, what tenants cannot take: an eighth, at least 8. */
#define API_OPERATOR_RESERVE(total) ((total) / 8 > 8 ? (total) / 8 : 8u)

struct api_conn_limits {
    unsigned total;              /* connections in all (api-max-connections) */
    unsigned reserve;            /* of total, kept for root and operators */
    unsigned per_user;           /* a tenant's connections (api-user-connections) */
    unsigned followers;          /* event streams in all */
    unsigned followers_reserve;  /* of those, kept for root and operators */
    unsigned per_user_followers; /* a tenant's event streams (api-user-followers) */
    uint64_t request_timeout_ns; /* api-request-timeout */
};

struct api_conn {
    int fd;
    struct ucred cred;
    bool all;          /* root, the daemon's user or an operator: the bounds are not its */
    bool follower;     /* holds an event stream */
    bool cut;          /* cut by the rules (timed out or displaced); no longer counted */
    uint64_t deadline; /* monotonic ns by which a request must have arrived; 0: none */
    struct api_conn *prev, *next; /* accept order, oldest first */
};

struct api_conns {
    struct api_conn_limits lim;
    struct api_conn **by_fd;
    int cap;
    struct api_conn *oldest, *newest;
    unsigned n, n_tenants;           /* counted connections; those of tenants */
    unsigned nfollow, nfollow_tenants;
    struct uid_counts users;         /* tenants only: n = connections, aux = followers */
    uint64_t accepted, refused, displaced, timed_out;
};

/* Why a connection was not admitted (api_conns_admit) or a stream not opened. */
enum api_refusal {
    API_ADMITTED = 0,
    API_REFUSED_USER,   /* the tenant holds its per-user bound: 429 */
    API_REFUSED_FULL,   /* every connection the caller's class may use is taken: 503 */
    API_REFUSED_MEMORY, /* 503 */
};

void api_conns_init(struct api_conns *t, const struct api_conn_limits *lim);
void api_conns_free(struct api_conns *t);

/* A freshly accepted fd of a caller: admitted (*out set, API_ADMITTED) or refused (the caller
 * answers and closes fd). When the tenants' share is full, `*displace` may be set to a
 * connection the caller must cut (shutdown) for this one to get in; it is no longer counted. */
enum api_refusal api_conns_admit(struct api_conns *t, int fd, const struct ucred *cred, bool all,
                                 uint64_t now, struct api_conn **out, struct api_conn **displace);
struct api_conn *api_conns_find(const struct api_conns *t, int fd);
/* The connection's socket was closed: forget it. */
void api_conns_closed(struct api_conns *t, struct api_conn *c);
/* A whole request arrived (it is being answered): no deadline until the answer is done. */
void api_conns_request_arrived(struct api_conn *c);
/* The answer is done and the connection may carry another request: the clock starts again. */
void api_conns_answered(struct api_conns *t, struct api_conn *c, uint64_t now);
/* The connection asks for an event stream. */
enum api_refusal api_conns_follow(struct api_conns *t, struct api_conn *c);
/* Every connection whose deadline has passed is handed to cut(fd, ctx) once and no longer
 * counted. Returns the next deadline (0: none). */
uint64_t api_conns_expire(struct api_conns *t, uint64_t now, void (*cut)(int fd, void *ctx),
                          void *ctx);
/* The refusal's words, for the answer and the log. */
const char *api_refusal_text(enum api_refusal r);

#endif
