/* prepare.c — NodePrepareResources and NodeUnprepareResources for one claim, and the slices the
 * driver publishes (dra.h). One claim at a time (a mutex): kubelet prepares a pod's claims
 * before its containers start and calls again for a claim already prepared, and two pods
 * sharing a claim must find one container, not race to make two.
 *
 * A prepared claim is three files and one convgpud container:
 *   STATE/claims/<uid>.json      the record: what kubelet was answered
 *   STATE/claims/<uid>.preload   the /etc/ld.so.preload the containers get
 *   CDI/convgpu-claim-<uid>.json the CDI spec (cdi.c)
 *   container dra-<uid>          created by the driver (root) through the client library
 * Prepare writes the record last and unprepare removes it first, so a record always names a
 * whole preparation. */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "convgpu_client.h"
#include "cdi_spec.h"
#include "dra.h"

static struct dra_config config;
static struct k8s_api api;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct dra_inventory published;
static bool have_published;
static long generation;

void dra_configure(const struct dra_config *c, const struct k8s_api *a)
{
    config = *c;
    api = *a;
    /* A pool's generation only grows: a restarted driver starts above any it published. */
    generation = (long)time(NULL);
}

const struct dra_config *dra_config_get(void)
{
    return &config;
}

static bool k8s_name_valid(const char *s, size_t max)
{
    size_t n = s ? strlen(s) : 0;
    if (n == 0 || n > max)
        return false;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.'))
            return false;
    }
    return true;
}

static void paths(const char *uid, char *record, char *preload, char *cdi, size_t len)
{
    snprintf(record, len, "%s/claims/%s.json", config.state_dir, uid);
    snprintf(preload, len, "%s/claims/%s.preload", config.state_dir, uid);
    snprintf(cdi, len, "%s/convgpu-claim-%s.json", config.cdi_dir, uid);
}

static int read_devices(struct dra_inventory *inv, char *err, size_t errlen)
{
    json_t *ans = NULL;
    char why[512] = "";
    long st = cli_request("GET", "/v1/devices", NULL, &ans, why, sizeof why);
    int rc = -1;
    if (st != 200)
        snprintf(err, errlen, "convgpud: GET /v1/devices: %s", st ? "refused" : why);
    else
        rc = dra_inventory_decode(ans, inv, err, errlen);
    json_decref(ans);
    return rc;
}

/* The record's answer, if the claim is prepared and its container still exists. */
static int load_prepared(const char *uid, const char *record, struct dra_prepared *out, size_t cap,
                         size_t *n)
{
    json_t *r = json_load_file(record, 0, NULL);
    json_t *list = json_object_get(r, "devices");
    if (!json_is_array(list)) {
        json_decref(r);
        return -1;
    }
    char id[80];
    snprintf(id, sizeof id, DRA_ID_PREFIX "%s", uid);
    struct cgc_error e;
    json_t *c = cgc_inspect(id, &e);
    if (!c) { /* gone (convgpu rm, a lost daemon state): prepared afresh */
        json_decref(r);
        return -1;
    }
    json_decref(c);
    size_t i;
    json_t *d;
    *n = 0;
    json_array_foreach(list, i, d) {
        if (*n == cap)
            break;
        struct dra_prepared *p = &out[(*n)++];
        snprintf(p->pool, sizeof p->pool, "%s", json_string_value(json_object_get(d, "pool")));
        snprintf(p->device, sizeof p->device, "%s",
                 json_string_value(json_object_get(d, "device")));
        snprintf(p->request, sizeof p->request, "%s",
                 json_string_value(json_object_get(d, "request")));
        snprintf(p->cdi_id, sizeof p->cdi_id, "%s", json_string_value(json_object_get(d, "cdi")));
    }
    json_decref(r);
    return 0;
}

static void release(const char *uid)
{
    char record[PATH_MAX], preload[PATH_MAX], cdi[PATH_MAX], id[80];
    paths(uid, record, preload, cdi, sizeof record);
    unlink(record);
    unlink(cdi);
    snprintf(id, sizeof id, DRA_ID_PREFIX "%s", uid);
    struct cgc_error e;
    cgc_remove(id, &e);
    unlink(preload);
}

/* The convgpu priority of a claim: the highest of its pods' (status.reservedFor) spec.priority,
 * through the operator's map. Without a map, 0 and no request. A pod the API server no longer
 * has (404: deleted while the claim still names it) has no say; any other failure refuses the
 * prepare, which kubelet retries. */
static int claim_priority(const struct dra_claim *claim, unsigned *out, char *err, size_t errlen)
{
    *out = 0;
    if (config.priority_map.n == 0)
        return 0;
    if (claim->pods_truncated) {
        snprintf(err, errlen, "the claim is reserved for more than %d pods: their priorities "
                              "are not all read", DRA_MAX_PODS);
        return -1;
    }
    for (size_t i = 0; i < claim->npods; i++) {
        char path[640], why[512] = "";
        snprintf(path, sizeof path, "/api/v1/namespaces/%s/pods/%s", claim->namespace_,
                 claim->pods[i].name);
        json_t *pod = NULL;
        long st = k8s_api_request(&api, "GET", path, NULL, NULL, &pod, why, sizeof why);
        int64_t value = 0;
        int rc = 0;
        if (st == 200)
            rc = dra_pod_priority(pod, claim->namespace_, claim->pods[i].name,
                                  claim->pods[i].uid, &value, err, errlen);
        else if (st != 404) {
            snprintf(err, errlen, "the claim's pod %s/%s: %s", claim->namespace_,
                     claim->pods[i].name, why);
            rc = -1;
        }
        json_decref(pod);
        if (rc != 0)
            return -1;
        unsigned p = st == 200 ? dra_priority_of(&config.priority_map, value) : 0;
        if (p > *out)
            *out = p;
    }
    return 0;
}

static int prepare_locked(const char *ns, const char *name, const char *uid,
                          struct dra_prepared *out, size_t cap, size_t *n, char *err, size_t errlen)
{
    char record[PATH_MAX], preload[PATH_MAX], cdi[PATH_MAX], path[768], id[80];
    paths(uid, record, preload, cdi, sizeof record);
    if (load_prepared(uid, record, out, cap, n) == 0)
        return 0;

    snprintf(path, sizeof path, "/apis/" DRA_API_GROUP "/namespaces/%s/resourceclaims/%s", ns,
             name);
    json_t *obj = NULL;
    long st = k8s_api_request(&api, "GET", path, NULL, NULL, &obj, err, errlen);
    struct dra_claim claim;
    struct dra_inventory inv;
    struct dra_grant grant;
    int rc = st == 200 ? dra_claim_decode(obj, uid, config.node, &claim, err, errlen) : -1;
    json_decref(obj);
    unsigned priority = 0;
    if (rc != 0 || read_devices(&inv, err, errlen) != 0 ||
        dra_grant_of(&claim, &inv, config.partitions, &grant, err, errlen) != 0 ||
        claim_priority(&claim, &priority, err, errlen) != 0)
        return -1;
    if (claim.nresults > cap) {
        snprintf(err, errlen, "the claim has more devices than the driver answers");
        return -1;
    }

    snprintf(id, sizeof id, DRA_ID_PREFIX "%s", uid);
    struct cg_client_spec spec = {
        .id = id,
        .gpu_memory = grant.memory,
        .compute_pct = grant.compute,
        .has_owner = true,
        .uid = (uid_t)config.owner_uid,
        .gid = (gid_t)config.owner_gid,
        .replace_idle = true,
        .no_profile = true,
        /* The driver is root: convgpud takes any priority from it, above the tenant's ceiling
         * (docs/SECURITY.md). Only the operator's map and the administrators' classes set it. */
        .priority = (int)priority,
        .has_priority = priority > 0,
    };
    char tenant[64];
    snprintf(tenant, sizeof tenant, "%s", ns);
    if (strlen(ns) <= 32 && strchr(ns, '.') == NULL)
        spec.tenant = tenant;
    if (grant.ngpus == 1) {
        spec.device = grant.gpus[0];
        spec.has_device = true;
    } else {
        spec.devices = grant.gpus;
        spec.ndevices = grant.ngpus;
    }
    struct cgc_error e;
    json_t *created = cgc_create(&spec, &e);
    if (!created) {
        cgc_error_format(&e, "convgpud refused the claim's container", err, errlen);
        return -1;
    }
    char line[] = "/usr/lib/convgpu/libconvgpu.so\n";
    /* The create answer's env holds the node's part (the interposer, the emulator) too. */
    json_t *cdispec = dra_cdi_spec(uid, NULL, created, preload, err, errlen);
    char *text = cdispec ? json_dumps(cdispec, JSON_INDENT(2)) : NULL;
    json_t *rec = json_pack("{s:s,s:s,s:s,s:[]}", "uid", uid, "namespace", ns, "name", name,
                            "devices");
    char cdi_id[128];
    dra_cdi_id(uid, cdi_id, sizeof cdi_id);
    for (size_t i = 0; rec && i < claim.nresults; i++) {
        struct dra_prepared *p = &out[i];
        snprintf(p->pool, sizeof p->pool, "%s", config.node);
        snprintf(p->device, sizeof p->device, "%s", claim.results[i].device);
        snprintf(p->request, sizeof p->request, "%s", claim.results[i].request);
        snprintf(p->cdi_id, sizeof p->cdi_id, "%s", cdi_id);
        json_array_append_new(json_object_get(rec, "devices"),
                              json_pack("{s:s,s:s,s:s,s:s}", "pool", p->pool, "device", p->device,
                                        "request", p->request, "cdi", p->cdi_id));
    }
    char *rectext = rec ? json_dumps(rec, JSON_COMPACT) : NULL;
    rc = -1;
    if (!text || !rectext)
        snprintf(err, errlen, "out of memory");
    else if (cdi_write_atomically(preload, line, 0, err, errlen) == 0 &&
             cdi_write_atomically(cdi, text, 0, err, errlen) == 0 &&
             cdi_write_atomically(record, rectext, 0, err, errlen) == 0)
        rc = 0;
    if (rc != 0)
        release(uid);
    else
        *n = claim.nresults;
    free(text);
    free(rectext);
    json_decref(rec);
    json_decref(cdispec);
    json_decref(created);
    return rc;
}

static int check_claim(const char *ns, const char *name, const char *uid, char *err, size_t errlen)
{
    if (!dra_uid_valid(uid)) {
        snprintf(err, errlen, "claim UID \"%.64s\" is not a UID (1-%d of [A-Za-z0-9-])",
                 uid ? uid : "", DRA_UID_MAX);
        return -1;
    }
    if (!k8s_name_valid(ns, 63) || !k8s_name_valid(name, 253)) {
        snprintf(err, errlen, "claim %.64s/%.64s: not a namespace and a name", ns ? ns : "",
                 name ? name : "");
        return -1;
    }
    return 0;
}

int dra_prepare(const char *ns, const char *name, const char *uid, struct dra_prepared *out,
                size_t cap, size_t *n, char *err, size_t errlen)
{
    *n = 0;
    if (check_claim(ns, name, uid, err, errlen) != 0)
        return -1;
    pthread_mutex_lock(&lock);
    int rc = prepare_locked(ns, name, uid, out, cap, n, err, errlen);
    pthread_mutex_unlock(&lock);
    return rc;
}

int dra_unprepare(const char *ns, const char *name, const char *uid, char *err, size_t errlen)
{
    if (!dra_uid_valid(uid)) {
        snprintf(err, errlen, "claim UID \"%.64s\" is not a UID", uid ? uid : "");
        return -1;
    }
    (void)ns;
    (void)name;
    char id[80];
    snprintf(id, sizeof id, DRA_ID_PREFIX "%s", uid);
    pthread_mutex_lock(&lock);
    char record[PATH_MAX], preload[PATH_MAX], cdi[PATH_MAX];
    paths(uid, record, preload, cdi, sizeof record);
    unlink(record);
    unlink(cdi);
    struct cgc_error e;
    int rc = cgc_remove(id, &e);
    if (rc == 0)
        unlink(preload);
    else
        cgc_error_format(&e, "convgpud did not remove the claim's container", err, errlen);
    pthread_mutex_unlock(&lock);
    return rc == 0 ? 0 : -1;
}

int dra_refresh_slices(bool force, char *err, size_t errlen)
{
    struct dra_inventory inv;
    if (read_devices(&inv, err, errlen) != 0)
        return -1;
    if (config.partitions && inv.ngpus * (config.partitions + 1) > 64) {
        snprintf(err, errlen, "%zu GPUs with %u partitions each are more than the 64 devices a "
                              "slice with counters holds", inv.ngpus, config.partitions);
        return -1;
    }
    pthread_mutex_lock(&lock);
    bool same = have_published && memcmp(&inv, &published, sizeof inv) == 0;
    pthread_mutex_unlock(&lock);
    if (same && !force)
        return 0;
    json_t *slices = dra_slices(&inv, config.node, config.partitions, generation + 1);
    if (!slices) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    int rc = dra_publish(&api, slices, err, errlen);
    json_decref(slices);
    if (rc == 0) {
        pthread_mutex_lock(&lock);
        published = inv;
        have_published = true;
        generation++;
        pthread_mutex_unlock(&lock);
    }
    return rc;
}
