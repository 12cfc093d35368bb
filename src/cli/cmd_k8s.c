/* cmd_k8s.c — `convgpu k8s annotation` and `convgpu k8s publish`: this node's per-GPU free
 * convgpu units as the `convgpu.io/gpus` Node annotation that the scheduler extender reads
 * (src/integrations/k8s/publish: annotation.h says how the units are counted, patch.h how the
 * Node is patched). publish runs once, or with --interval as the node's publisher beside
 * convgpud (the DaemonSet in docs/KUBERNETES.md): it PATCHes when the annotation changed, when
 * the last PATCH failed, and at least every RESYNC_S seconds in case someone removed it. */
#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "annotation.h"
#include "cli.h"
#include "http.h"
#include "patch.h"
#include "size.h"

#define ANNOTATION_KEY "convgpu.io/gpus"
#define RESYNC_S 300

static int usage(FILE *f, int rc)
{
    fprintf(f,
            "Usage: convgpu k8s annotation [--memory-unit SIZE]\n"
            "       convgpu k8s publish [--node NAME] [--api-server URL] [--token-file F]\n"
            "                           [--ca-file F] [--interval S] [--memory-unit SIZE]\n\n"
            "annotation prints this node's convgpu.io/gpus annotation (per GPU: memory units\n"
            "total/free, compute units total/free) from the daemon's devices and containers;\n"
            "publish PATCHes it onto the Node through the API server, once or every S seconds\n"
            "(when it changed). Run them as root, so that every container is counted.\n\n"
            "  --memory-unit SIZE  bytes per convgpu.io/gpu-memory unit (default 256MiB; the\n"
            "                      device plugin's --memory-unit)\n"
            "  --node NAME         the Node (default $NODE_NAME)\n"
            "  --api-server URL    default https://$KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT\n"
            "  --token-file F      bearer token (default " K8S_SA_DIR "/token;\n"
            "                      '' for none)\n"
            "  --ca-file F         CA bundle for the API server (default " K8S_SA_DIR "/ca.crt)\n"
            "  --interval S        keep publishing every S seconds (1-3600) instead of once\n");
    return rc;
}

/* The annotation's text, or NULL with the reason printed. */
static char *annotation_text(uint64_t unit)
{
    json_t *devices = NULL, *containers = NULL;
    char terr[512] = "", err[256];
    long st = cli_request("GET", "/v1/devices", NULL, &devices, terr, sizeof terr);
    if (st != 200) {
        cli_report_error(st, devices, terr);
        json_decref(devices);
        return NULL;
    }
    st = cli_request("GET", "/v1/containers", NULL, &containers, terr, sizeof terr);
    if (st != 200) {
        cli_report_error(st, containers, terr);
        json_decref(devices);
        json_decref(containers);
        return NULL;
    }
    /* Seed 003's matrix (annotation.h "apps"); a daemon without the route, or one that cannot
     * read its rows, publishes no apps rather than nothing. */
    json_t *interference = NULL;
    char ierr[256];
    if (cli_request("GET", "/v1/interference", NULL, &interference, ierr, sizeof ierr) != 200 ||
        !json_is_array(interference)) {
        json_decref(interference);
        interference = NULL;
    }
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    json_t *ann = k8s_annotation_build(devices, containers, interference,
                                       (double)ts.tv_sec + (double)ts.tv_nsec / 1e9, unit, err,
                                       sizeof err);
    json_decref(devices);
    json_decref(containers);
    json_decref(interference);
    if (!ann) {
        fprintf(stderr, "convgpu k8s: %s\n", err);
        return NULL;
    }
    char *text = json_dumps(ann, JSON_COMPACT);
    json_decref(ann);
    return text;
}

static int publish(const char *node, const struct k8s_api *api, uint64_t unit, long interval)
{
    char *last = NULL;
    time_t last_at = 0;
    int rc = 0;
    curl_global_init(CURL_GLOBAL_DEFAULT);
    for (;;) {
        char *text = annotation_text(unit);
        if (!text && interval) {
            /* The daemon is down: no GPU of this node can take a pod now, so say so rather
             * than leave the last numbers standing. */
            text = strdup("[]");
        }
        if (!text) {
            rc = 1;
            break;
        }
        time_t now = time(NULL);
        if (!last || strcmp(text, last) != 0 || now - last_at >= RESYNC_S) {
            char err[1024];
            if (k8s_patch_annotation(api, node, ANNOTATION_KEY, text, err, sizeof err) != 0) {
                fprintf(stderr, "convgpu k8s publish: %s\n", err);
                free(text);
                text = NULL;
                rc = 1;
            } else {
                printf("convgpu k8s publish: %s %s=%s\n", node, ANNOTATION_KEY, text);
                fflush(stdout);
                rc = 0;
                last_at = now;
            }
            free(last);
            last = text; /* NULL after a failure: the next round PATCHes again */
        } else {
            free(text);
        }
        if (!interval)
            break;
        sleep((unsigned)interval);
    }
    free(last);
    k8s_api_close();
    curl_global_cleanup();
    return rc;
}

int cmd_k8s(int argc, char **argv)
{
    if (cli_wants_help(argc, argv))
        return usage(stdout, 0);
    if (argc < 2 || (strcmp(argv[1], "annotation") != 0 && strcmp(argv[1], "publish") != 0))
        return usage(stderr, 2);
    bool pub = strcmp(argv[1], "publish") == 0;
    uint64_t unit = K8S_DEFAULT_UNIT_BYTES;
    const char *node = getenv("NODE_NAME"), *server = NULL;
    struct k8s_api api = {0};
    k8s_api_sa_defaults(&api);
    long interval = 0;
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!v || (!pub && strcmp(a, "--memory-unit") != 0)) {
            fprintf(stderr, "convgpu k8s %s: unknown or incomplete argument '%s'\n", argv[1], a);
            return usage(stderr, 2);
        }
        i++;
        if (strcmp(a, "--memory-unit") == 0) {
            const char *why = NULL;
            if (cg_parse_size(v, &unit, &why) != 0 || unit < (1ull << 20)) {
                fprintf(stderr, "convgpu k8s: --memory-unit wants a size of at least 1MiB, not "
                                "'%s'\n", v);
                return 2;
            }
        } else if (strcmp(a, "--node") == 0) {
            node = v;
        } else if (strcmp(a, "--api-server") == 0) {
            server = v;
        } else if (strcmp(a, "--token-file") == 0 || strcmp(a, "--ca-file") == 0) {
            char *to = a[2] == 't' ? api.token_file : api.ca_file;
            if ((size_t)snprintf(to, sizeof api.token_file, "%s", v) >= sizeof api.token_file) {
                fprintf(stderr, "convgpu k8s publish: %s: path too long\n", a);
                return 2;
            }
        } else if (strcmp(a, "--interval") == 0) {
            char *end;
            interval = strtol(v, &end, 10);
            if (*end || end == v || interval < 1 || interval > 3600) {
                fprintf(stderr, "convgpu k8s publish: --interval wants seconds, 1 to 3600\n");
                return 2;
            }
        } else {
            fprintf(stderr, "convgpu k8s publish: unknown argument '%s'\n", a);
            return usage(stderr, 2);
        }
    }
    if (!pub) {
        char *text = annotation_text(unit);
        if (!text)
            return 1;
        printf("%s\n", text);
        free(text);
        return 0;
    }
    if (!node || !k8s_valid_node_name(node)) {
        fprintf(stderr, "convgpu k8s publish: give --node NAME (or $NODE_NAME): a Node name of "
                        "lower-case letters, digits, '-' and '.'%s%s%s\n",
                node ? ", not '" : "", node ? node : "", node ? "'" : "");
        return 2;
    }
    char err[256];
    if (server) {
        size_t n = strlen(server);
        while (n && server[n - 1] == '/')
            n--;
        if ((strncmp(server, "https://", 8) != 0 && strncmp(server, "http://", 7) != 0) ||
            n >= sizeof api.server) {
            fprintf(stderr, "convgpu k8s publish: --api-server wants an https:// (or http://) "
                            "URL\n");
            return 2;
        }
        memcpy(api.server, server, n);
        api.server[n] = '\0';
    } else if (k8s_api_in_cluster(&api, err, sizeof err) != 0) {
        fprintf(stderr, "convgpu k8s publish: %s\n", err);
        return 2;
    }
    return publish(node, &api, unit, interval);
}
