/* api_interference.c — GET, PUT and DELETE /v1/interference (api_interference.h): who may touch
 * which tenant's rows, and the store's answer as HTTP. The body is parsed whole first
 * (api_interference_parse.c); a refusal changes nothing. */
#include "api_interference.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "daemon.h"
#include "interference.h"
#include "log.h"
#include "store.h"
#include "tenant.h"

static json_t *answer_error(unsigned *status, unsigned code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static json_t *answer_error(unsigned *status, unsigned code, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    *status = code;
    return json_pack("{s:s}", "error", msg);
}

/* A write the store did not take: 507 when the disk is full, else 503 (store.h). */
static json_t *not_stored(struct daemon *d, unsigned *status, int rc, const char *what)
{
    return answer_error(status, rc == -ENOSPC ? 507 : 503, "%s: the state could not be saved (%s)",
                        what, d->store ? store_error(d->store) : "no store");
}

static int row_to_json(void *ctx, const char *tenant, const struct interference_row *r)
{
    json_t *o = json_pack("{s:s,s:s,s:s,s:f,s:i,s:I}", "tenant", tenant, "foreground",
                          r->foreground, "background", r->background, "slowdown", r->slowdown,
                          "runs", (int)r->runs, "measured", (json_int_t)r->measured_unix);
    return o && json_array_append_new(ctx, o) == 0 ? 0 : -1;
}

static json_t *put_rows(struct daemon *d, const char *body, size_t len, const char *tenant,
                        unsigned *status)
{
    static struct interference_row rows[INTERFERENCE_MAX_ROWS]; /* the loop is single-threaded */
    size_t n = 0;
    char msg[512];
    if (api_parse_interference(body, len, rows, &n, msg, sizeof msg) != 0)
        return answer_error(status, 400, "%s", msg);
    int64_t now = (int64_t)time(NULL);
    for (size_t i = 0; i < n; i++)
        rows[i].measured_unix = now;
    bool over = false;
    int rc = d->store ? store_interference_put(d->store, tenant, rows, n,
                                               INTERFERENCE_MAX_TENANT_ROWS, &over)
                      : -EIO;
    if (rc != 0)
        return not_stored(d, status, rc, "interference not stored");
    if (over)
        return answer_error(status, 409, "tenant %s would hold more than %d interference rows; "
                                         "clear them first (DELETE /v1/interference)", tenant,
                            INTERFERENCE_MAX_TENANT_ROWS);
    log_info("interference: %zu row%s stored for tenant %s", n, n == 1 ? "" : "s", tenant);
    interference_reload(d); /* placement sees the new rows at once */
    *status = 200;
    return json_pack("{s:s,s:i}", "tenant", tenant, "stored", (int)n);
}

json_t *api_interference(struct daemon *d, const char *method, const char *body, size_t len,
                         uid_t uid, bool all, const char *asked, unsigned *status)
{
    bool get = strcmp(method, "GET") == 0, put = strcmp(method, "PUT") == 0,
         del = strcmp(method, "DELETE") == 0;
    if (!get && !put && !del)
        return answer_error(status, 405, "use GET, PUT or DELETE on /v1/interference");
    char own[TENANT_NAME_MAX + 1];
    tenant_of_uid(uid, own);
    if (asked && !tenant_name_valid(asked))
        return answer_error(status, 400, "tenant must be 1-%d characters of [A-Za-z0-9_.-], not "
                                         "starting with . or -", TENANT_NAME_MAX);
    if (asked && !all && strcmp(asked, own) != 0)
        return answer_error(status, 403, "only operators see or change other tenants' "
                                         "interference rows; yours are tenant %s's", own);
    if (put)
        return put_rows(d, body, len, asked ? asked : own, status);
    const char *tenant = asked ? asked : all ? NULL : own;
    if (get) {
        json_t *arr = json_array();
        if (!arr || !d->store || store_interference_each(d->store, tenant, row_to_json, arr) != 0) {
            json_decref(arr);
            return answer_error(status, 503, "cannot read the interference rows");
        }
        *status = 200;
        return arr;
    }
    unsigned n = 0;
    int rc = d->store ? store_interference_delete(d->store, tenant, &n) : -EIO;
    if (rc != 0)
        return not_stored(d, status, rc, "interference not cleared");
    log_info("interference: %u row%s removed (%s)", n, n == 1 ? "" : "s",
             tenant ? tenant : "every tenant");
    interference_reload(d);
    *status = 200;
    return json_pack("{s:i}", "removed", (int)n);
}
