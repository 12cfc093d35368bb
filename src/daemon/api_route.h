/* api_route.h — the control API's routes as data: for each method and path, who may call it and
 * which handler answers. The table is the one place privilege is declared; api.c enforces it
 * before any handler runs, `convgpud --routes` prints it, and security.routes calls every route
 * as an unprivileged user against it. Matching is pure (tests/security/test_api_conns.c). */
#ifndef CONVGPUD_API_ROUTE_H
#define CONVGPUD_API_ROUTE_H

#include <stddef.h>

/* Who may call a route. Callers are root, the daemon's user, operators (members of
 * operators-group) and everyone else in the control group ("users"). */
enum api_may {
    API_MAY_ANYONE,   /* every caller; a user sees and is bounded to its own (filtered inside) */
    API_MAY_OWNER,    /* a container the caller owns, or any for root and operators: {id} is
                       * resolved before the handler, and another's answers 404 as a missing one */
    API_MAY_OPERATOR, /* root, the daemon's user and operators */
    API_MAY_ADMIN,    /* root and the daemon's user only */
};

enum api_handler {
    H_VERSION, H_DEVICES, H_LIST, H_CREATE, H_INSPECT, H_REMOVE, H_START, H_LIMIT, H_SWAP_OUT,
    H_SWAP_IN, H_POLICY_GET, H_POLICY_PUT, H_TENANTS, H_TENANT_GET, H_TENANT_PUT, H_EVENTS,
    H_PROFILES, H_PROFILE_DELETE, H_ALLOCATE, H_INTERFERENCE, H_METRICS, H_PAUSE, H_RESUME,
    H_MOVE, H_COUNT
};

struct api_route {
    const char *method;  /* "GET", "POST", "PUT", "DELETE" */
    const char *path;    /* literal segments, "{}" one segment, "{*}" the rest (at least 1 char) */
    enum api_may may;
    enum api_handler handler;
    const char *deny;    /* the 403's words for a caller who may not */
};

extern const struct api_route api_routes[];
extern const size_t api_nroutes;

/* The route for method and path (without the query). NULL when none: *status 404 (no such path)
 * or 405 (the path exists for other methods, listed in `allowed` as "GET or POST"). arg gets
 * what "{}" or "{*}" matched ("" when nothing); a longer one than arglen - 1 does not match. */
const struct api_route *api_route_match(const char *method, const char *path, char *arg,
                                        size_t arglen, unsigned *status, char *allowed,
                                        size_t allowedlen);
const char *api_may_name(enum api_may may);

#endif
