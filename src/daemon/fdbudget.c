/* fdbudget.c — the descriptor plan (fdbudget.h). One owner may take at most a quarter of the
 * container-socket connections, so three quarters stay for everyone else whatever one user
 * does; a quarter of the default (LimitNOFILE=65536) is about 16,000, far beyond what honest
 * processes hold (one connection per process and container). */
#include "fdbudget.h"

#include <stdio.h>

int fdbudget_plan(struct fdbudget *b, char *warning, size_t len)
{
    unsigned long kept = FDBUDGET_DAEMON + FDBUDGET_CONTAINERS * FDBUDGET_PER_CONTAINER;
    unsigned long api = b->api_max_connections;
    if (b->max_client_connections == 0) {
        unsigned long left = b->nofile > kept + api ? b->nofile - kept - api : 0;
        if (left < 64) /* a tiny limit: the warning below says so; keep the daemon usable */
            left = b->nofile > 128 ? b->nofile / 2 : 64;
        b->max_client_connections = left > 1000000 ? 1000000u : (unsigned)left;
    }
    if (b->user_max_connections == 0) {
        unsigned q = b->max_client_connections / 4;
        b->user_max_connections = q ? q : 1;
    }
    unsigned long need = kept + api + b->max_client_connections;
    if (need > b->nofile) {
        snprintf(warning, len,
                 "the descriptor limit (%lu) is smaller than the connection bounds need: "
                 "api-max-connections %lu + max-client-connections %u + %lu kept for the daemon "
                 "and %u containers' files = %lu; raise LimitNOFILE (ulimit -n) or lower the "
                 "bounds, or a flood of connections ends in refused creates and processes",
                 b->nofile, api, b->max_client_connections, kept, FDBUDGET_CONTAINERS, need);
        return 1;
    }
    if (b->user_max_connections > b->max_client_connections / 2) {
        snprintf(warning, len,
                 "user-max-connections %u is more than half of max-client-connections %u: one "
                 "user's containers may take the connections every other user needs",
                 b->user_max_connections, b->max_client_connections);
        return 1;
    }
    return 0;
}
