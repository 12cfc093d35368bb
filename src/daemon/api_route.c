/* api_route.c — the route table and its matcher (api_route.h). */
#include "api_route.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#define ONLY_ADMIN "only root or the daemon's user may "

const struct api_route api_routes[] = {
    {"GET", "/v1/version", API_MAY_ANYONE, H_VERSION, NULL},
    {"GET", "/v1/devices", API_MAY_ANYONE, H_DEVICES, NULL},
    {"GET", "/v1/containers", API_MAY_ANYONE, H_LIST, NULL},
    {"POST", "/v1/containers", API_MAY_ANYONE, H_CREATE, NULL},
    {"GET", "/v1/containers/{}", API_MAY_OWNER, H_INSPECT, NULL},
    {"DELETE", "/v1/containers/{}", API_MAY_OWNER, H_REMOVE, NULL},
    {"POST", "/v1/containers/{}/start", API_MAY_OWNER, H_START, NULL},
    {"PUT", "/v1/containers/{}/limit", API_MAY_OWNER, H_LIMIT, NULL},
    {"POST", "/v1/containers/{}/swap-out", API_MAY_OWNER, H_SWAP_OUT, NULL},
    {"POST", "/v1/containers/{}/swap-in", API_MAY_OWNER, H_SWAP_IN, NULL},
    {"POST", "/v1/containers/{}/pause", API_MAY_OWNER, H_PAUSE, NULL},
    {"POST", "/v1/containers/{}/resume", API_MAY_OWNER, H_RESUME, NULL},
    {"POST", "/v1/containers/{}/move", API_MAY_OPERATOR, H_MOVE,
     "only root, the daemon's user and operators may move a container to another GPU"},
    {"GET", "/v1/policy", API_MAY_ANYONE, H_POLICY_GET, NULL},
    {"PUT", "/v1/policy", API_MAY_ADMIN, H_POLICY_PUT, ONLY_ADMIN "change policy"},
    {"GET", "/v1/tenants", API_MAY_ANYONE, H_TENANTS, NULL},
    {"GET", "/v1/tenants/{}", API_MAY_ANYONE, H_TENANT_GET, NULL},
    {"PUT", "/v1/tenants/{}", API_MAY_ADMIN, H_TENANT_PUT,
     ONLY_ADMIN "set a tenant's weight and allowances"},
    {"GET", "/v1/events", API_MAY_ANYONE, H_EVENTS, NULL},
    {"GET", "/v1/profiles", API_MAY_ANYONE, H_PROFILES, NULL},
    {"DELETE", "/v1/profiles/{*}", API_MAY_ANYONE, H_PROFILE_DELETE, NULL},
    {"POST", "/v1/allocations", API_MAY_OPERATOR, H_ALLOCATE,
     "only root, the daemon's user and operators (the device plugin) may record allocations"},
    {"GET", "/v1/interference", API_MAY_ANYONE, H_INTERFERENCE, NULL},
    {"PUT", "/v1/interference", API_MAY_ANYONE, H_INTERFERENCE, NULL},
    {"DELETE", "/v1/interference", API_MAY_ANYONE, H_INTERFERENCE, NULL},
    {"GET", "/metrics", API_MAY_ANYONE, H_METRICS, NULL},
};
const size_t api_nroutes = sizeof api_routes / sizeof api_routes[0];

const char *api_may_name(enum api_may may)
{
    switch (may) {
    case API_MAY_ANYONE:
        return "anyone";
    case API_MAY_OWNER:
        return "owner";
    case API_MAY_OPERATOR:
        return "operator";
    case API_MAY_ADMIN:
        return "admin";
    }
    return "?";
}

/* Whether path matches pattern; what "{}" or "{*}" matched goes to arg. */
static bool path_match(const char *pattern, const char *path, char *arg, size_t arglen)
{
    if (arglen)
        arg[0] = '\0';
    while (*pattern) {
        if (strncmp(pattern, "{*}", 3) == 0) {
            size_t n = strlen(path);
            if (n == 0 || n >= arglen)
                return false;
            memcpy(arg, path, n + 1);
            return pattern[3] == '\0';
        }
        if (strncmp(pattern, "{}", 2) == 0) {
            size_t n = strcspn(path, "/");
            if (n == 0 || n >= arglen)
                return false;
            memcpy(arg, path, n);
            arg[n] = '\0';
            path += n;
            pattern += 2;
            continue;
        }
        if (*pattern != *path)
            return false;
        pattern++;
        path++;
    }
    return *path == '\0';
}

const struct api_route *api_route_match(const char *method, const char *path, char *arg,
                                        size_t arglen, unsigned *status, char *allowed,
                                        size_t allowedlen)
{
    size_t used = 0;
    if (allowedlen)
        allowed[0] = '\0';
    if (arglen)
        arg[0] = '\0';
    *status = 404;
    char scratch[512];
    for (size_t i = 0; i < api_nroutes; i++) {
        const struct api_route *r = &api_routes[i];
        if (!path_match(r->path, path, scratch, sizeof scratch))
            continue;
        if (strcmp(r->method, method) == 0) {
            if (!path_match(r->path, path, arg, arglen))
                continue; /* the argument is longer than the caller can take: no such thing */
            *status = 200;
            return r;
        }
        *status = 405;
        if (!strstr(allowed, r->method) && used < allowedlen) {
            int n = snprintf(allowed + used, allowedlen - used, "%s%s", used ? " or " : "",
                             r->method);
            if (n > 0)
                used += (size_t)n < allowedlen - used ? (size_t)n : allowedlen - used - 1;
        }
    }
    return NULL;
}
