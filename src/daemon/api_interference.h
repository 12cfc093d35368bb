/* api_interference.h — measured interference stored in the daemon (issue 22 item 3): how much
 * each workload (a profile key) slows down when another runs beside it on the same GPU.
 *
 * Follow one matrix: `convgpu interfere --save --key a --key b -- CMD1 CMD2` measures each
 * workload alone (those runs are ordinary profile runs of keys a and b, profile.h) and every
 * ordered pair together (created with "profile": false: a run slowed down by design teaches
 * nothing about the job alone), then sends PUT /v1/interference {"rows": [{"foreground": "a",
 * "background": "b", "slowdown": 1.42, "runs": 3}, ...]}. The body is parsed whole before
 * anything is written (api_parse_interference: every key by cg_profile_key_valid, a slowdown
 * finite, above 0 and below INTERFERENCE_SLOWDOWN_MAX, runs 1..INTERFERENCE_RUNS_MAX, at most
 * INTERFERENCE_MAX_ROWS rows, no pair twice); then all rows go into state.db in one transaction
 * (table interference), each replacing the tenant's earlier row for the same pair, stamped with
 * the daemon's clock. GET /v1/interference lists them; DELETE /v1/interference clears them.
 *
 * The tenant is the caller's own (tenant_of_uid: its user name), as for profiles: a caller who
 * is not an operator reads, writes and clears only its own tenant's rows, so no tenant can
 * replace another's; an operator may name one with ?tenant=NAME (GET and DELETE without it:
 * every tenant's). A tenant holds at most INTERFERENCE_MAX_TENANT_ROWS rows (409 beyond,
 * nothing stored).
 *
 * What reads the matrix: the interference placement (convgpud --placement interference:
 * interference.h keeps every tenant's rows in memory, reloaded after each PUT and DELETE), and
 * the Kubernetes publisher (the per-GPU "apps" weights the extender ranks by); `convgpu profile
 * interference` shows it. The load-balance and standalone placements read the profiles'
 * utilisation. */
#ifndef CONVGPUD_API_INTERFERENCE_H
#define CONVGPUD_API_INTERFERENCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <jansson.h>

#include "interference.h"

/* PUT /v1/interference's body into rows[0..*n-1] (rows holds INTERFERENCE_MAX_ROWS). Pure (no
 * daemon state), fuzzed with the other bodies (fuzz/fuzz_api.c). Returns 0, or -1 with a
 * message naming the field ("rows[2].slowdown ...") in err. */
int api_parse_interference(const char *body, size_t len, struct interference_row *rows,
                           size_t *n, char *err, size_t errlen);

struct daemon;
/* One request on /v1/interference (method GET, PUT or DELETE) from uid (all: an operator),
 * tenant the ?tenant= argument or NULL. Returns the answer and its HTTP status in *status; NULL
 * when out of memory. */
json_t *api_interference(struct daemon *d, const char *method, const char *body, size_t len,
                         uid_t uid, bool all, const char *tenant, unsigned *status);

#endif
