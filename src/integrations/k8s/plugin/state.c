/* state.c — the plugin's settings, its one piece of shared state (the inventory last read from
 * convgpud, with a generation that open ListAndWatch streams wait on), and its two requests to
 * convgpud: the devices it reads and the allocations it records (plugin.h). */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "http.h"
#include "inventory.h"
#include "plugin.h"

static struct dp_config config;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t changed;
static struct dp_inventory current;
static uint64_t generation = 1;

void dp_configure(const struct dp_config *c)
{
    config = *c;
    pthread_condattr_t a;
    pthread_condattr_init(&a);
    pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
    pthread_cond_init(&changed, &a);
    pthread_condattr_destroy(&a);
}

const struct dp_config *dp_config_get(void)
{
    return &config;
}

void dp_state_get(struct dp_inventory *out, uint64_t *gen)
{
    pthread_mutex_lock(&lock);
    *out = current;
    if (gen)
        *gen = generation;
    pthread_mutex_unlock(&lock);
}

/* Stores what a read found, merged with what was known; wakes the streams when it differs. */
static void store(const struct dp_inventory *fresh, struct dp_inventory *out)
{
    pthread_mutex_lock(&lock);
    struct dp_inventory merged;
    dp_inventory_merge(&current, fresh, &merged);
    if (!dp_inventory_equal(&merged, &current)) {
        current = merged;
        generation++;
        pthread_cond_broadcast(&changed);
    }
    if (out)
        *out = current;
    pthread_mutex_unlock(&lock);
}

int dp_refresh(struct dp_inventory *out, char *err, size_t errlen)
{
    json_t *answer = NULL;
    char why[512] = "";
    long status = cli_request("GET", "/v1/devices", NULL, &answer, why, sizeof why);
    struct dp_inventory fresh;
    int rc = 0;
    if (status == 0) {
        snprintf(err, errlen, "%s", why);
        rc = -1;
    } else if (status != 200) {
        snprintf(err, errlen, "convgpud answered GET /v1/devices with HTTP %ld", status);
        rc = -1;
    } else if (dp_inventory_parse(answer, &fresh, err, errlen) != 0) {
        rc = -1;
    }
    json_decref(answer);
    store(rc == 0 ? &fresh : NULL, out);
    return rc;
}

uint64_t dp_wait_change(uint64_t seen, int timeout_ms)
{
    struct timespec until;
    clock_gettime(CLOCK_MONOTONIC, &until);
    until.tv_sec += timeout_ms / 1000;
    until.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
    if (until.tv_nsec >= 1000000000L) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000L;
    }
    pthread_mutex_lock(&lock);
    int rc = 0;
    while (generation == seen && rc != ETIMEDOUT)
        rc = pthread_cond_timedwait(&changed, &lock, &until);
    uint64_t g = generation;
    pthread_mutex_unlock(&lock);
    return g;
}

void dp_wake_all(void)
{
    pthread_mutex_lock(&lock);
    pthread_cond_broadcast(&changed);
    pthread_mutex_unlock(&lock);
}

int dp_code_of_status(long status)
{
    switch (status) {
    case 201: return DP_OK;
    case 0: return DP_UNAVAILABLE; /* not reachable: kubelet may try again */
    case 403: return DP_PERMISSION_DENIED; /* the plugin runs as a user convgpud refuses */
    case 507: return DP_RESOURCE_EXHAUSTED; /* too many records, or the disk full */
    }
    /* 400/404/409: the node changed under the poller's view (a GPU gone); 5xx: the daemon. */
    return status >= 400 && status < 500 ? DP_FAILED_PRECONDITION : DP_UNAVAILABLE;
}

static bool token_valid(const char *t)
{
    size_t n = 0;
    for (; t[n]; n++)
        if (!((t[n] >= '0' && t[n] <= '9') || (t[n] >= 'a' && t[n] <= 'f')))
            return false;
    return n == DP_TOKEN_LEN;
}

int dp_record(const struct dp_grant *g, char token[DP_TOKEN_LEN + 1], char *msg, size_t msglen)
{
    char text[DP_MAX_GPUS * 6 + 64];
    json_t *body = dp_grant_body(g, text, sizeof text) == 0 ? json_loads(text, 0, NULL) : NULL;
    if (!body) {
        snprintf(msg, msglen, "cannot write the allocation's record");
        return DP_INTERNAL;
    }
    json_t *answer = NULL;
    char why[512] = "";
    long status = cli_request("POST", "/v1/allocations", body, &answer, why, sizeof why);
    const char *tok = json_string_value(json_object_get(answer, "token"));
    const char *err = json_string_value(json_object_get(answer, "error"));
    int code = dp_code_of_status(status);
    if (code == DP_OK && (!tok || !token_valid(tok))) {
        snprintf(why, sizeof why, "its answer holds no token");
        code = DP_INTERNAL;
    }
    if (code == DP_OK)
        snprintf(token, DP_TOKEN_LEN + 1, "%s", tok);
    else if (status == 0)
        snprintf(msg, msglen, "convgpud is not reachable, nothing allocated: %s", why);
    else
        snprintf(msg, msglen, "convgpud did not record the allocation (HTTP %ld): %.300s%s", status,
                 err ? err : why,
                 status == 403 ? " (run the plugin as root, convgpud's user or an operator)" : "");
    json_decref(answer);
    return code;
}
