/* patch.c — one annotation PATCHed onto a Node with libcurl (the request is in patch.h). */
#include "patch.h"

#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_TOKEN 16384
#define MAX_ANSWER (1 << 20)

int k8s_api_in_cluster(struct k8s_api *api, char *err, size_t errlen)
{
    const char *host = getenv("KUBERNETES_SERVICE_HOST");
    const char *port = getenv("KUBERNETES_SERVICE_PORT");
    if (!host || !*host || !port || !*port) {
        snprintf(err, errlen, "KUBERNETES_SERVICE_HOST/PORT are not set (not in a pod?): give "
                              "--api-server URL");
        return -1;
    }
    int n = strchr(host, ':') ? snprintf(api->server, sizeof api->server, "https://[%s]:%s",
                                         host, port)
                              : snprintf(api->server, sizeof api->server, "https://%s:%s", host,
                                         port);
    if (n < 0 || (size_t)n >= sizeof api->server) {
        snprintf(err, errlen, "KUBERNETES_SERVICE_HOST is too long");
        return -1;
    }
    return 0;
}

int k8s_valid_node_name(const char *name)
{
    size_t n = strlen(name);
    if (n == 0 || n > 253)
        return 0;
    for (size_t i = 0; i < n; i++) {
        char c = name[i];
        int alnum = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
        if (!alnum && c != '-' && c != '.')
            return 0;
        if ((i == 0 || i == n - 1) && !alnum)
            return 0;
    }
    return 1;
}

/* The token: the file's first line, which must be printable (it goes into a header). */
static int read_token(const char *path, char *tok, size_t toklen, char *err, size_t errlen)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        snprintf(err, errlen, "cannot read the token %s: %s", path, strerror(errno));
        return -1;
    }
    ssize_t n = read(fd, tok, toklen - 1);
    close(fd);
    if (n <= 0 || (size_t)n >= toklen - 1) {
        snprintf(err, errlen, "the token %s is empty or longer than %zu bytes", path, toklen - 2);
        return -1;
    }
    tok[n] = '\0';
    tok[strcspn(tok, "\r\n")] = '\0';
    for (const char *p = tok; *p; p++)
        if (*p < 0x21 || *p > 0x7e) {
            snprintf(err, errlen, "the token %s holds a character a header cannot carry", path);
            return -1;
        }
    if (!tok[0]) {
        snprintf(err, errlen, "the token %s is empty", path);
        return -1;
    }
    return 0;
}

struct answer {
    char *data;
    size_t len;
};

static size_t collect(char *ptr, size_t size, size_t nmemb, void *ctx)
{
    struct answer *a = ctx;
    size_t n = size * nmemb;
    if (a->len + n > MAX_ANSWER)
        return 0; /* an answer that large is not the API server's: stop */
    char *nd = realloc(a->data, a->len + n + 1);
    if (!nd)
        return 0;
    memcpy(nd + a->len, ptr, n);
    a->data = nd;
    a->len += n;
    a->data[a->len] = '\0';
    return n;
}

int k8s_patch_annotation(const struct k8s_api *api, const char *node, const char *key,
                         const char *value, char *err, size_t errlen)
{
    if (!k8s_valid_node_name(node)) {
        snprintf(err, errlen, "'%s' is not a Node name", node);
        return -1;
    }
    char token[MAX_TOKEN], auth[MAX_TOKEN + 32], url[1024];
    if (api->token_file && *api->token_file) {
        if (read_token(api->token_file, token, sizeof token, err, errlen) != 0)
            return -1;
        snprintf(auth, sizeof auth, "Authorization: Bearer %s", token);
    }
    int n = snprintf(url, sizeof url, "%s/api/v1/nodes/%s", api->server, node);
    if (n < 0 || (size_t)n >= sizeof url) {
        snprintf(err, errlen, "the API server's URL is too long");
        return -1;
    }
    json_t *patch = json_pack("{s:{s:{s:s}}}", "metadata", "annotations", key, value);
    char *body = patch ? json_dumps(patch, JSON_COMPACT) : NULL;
    json_decref(patch);
    CURL *curl = body ? curl_easy_init() : NULL;
    if (!curl) {
        free(body);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    struct curl_slist *headers = NULL, *h;
    h = curl_slist_append(headers, "Content-Type: application/merge-patch+json");
    headers = h ? h : headers;
    h = h ? curl_slist_append(headers, "Accept: application/json") : NULL;
    headers = h ? h : headers;
    if (h && api->token_file && *api->token_file) {
        h = curl_slist_append(headers, auth);
        headers = h ? h : headers;
    }
    struct answer ans = {0};
    char curl_err[CURL_ERROR_SIZE] = "";
    int rc = -1;
    if (!h) {
        snprintf(err, errlen, "out of memory");
        goto out;
    }
    curl_easy_setopt(curl, CURLOPT_URL, url);
    curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, "PATCH");
    curl_easy_setopt(curl, CURLOPT_POSTFIELDS, body);
    curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE, (long)strlen(body));
    curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, collect);
    curl_easy_setopt(curl, CURLOPT_WRITEDATA, &ans);
    curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, curl_err);
    curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT, 10L);
    curl_easy_setopt(curl, CURLOPT_TIMEOUT, 30L);
    curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(curl, CURLOPT_FOLLOWLOCATION, 0L); /* the token goes nowhere else */
    if (api->ca_file && *api->ca_file)
        curl_easy_setopt(curl, CURLOPT_CAINFO, api->ca_file);
    CURLcode cc = curl_easy_perform(curl);
    if (cc != CURLE_OK) {
        snprintf(err, errlen, "PATCH %s: %s", url, curl_err[0] ? curl_err : curl_easy_strerror(cc));
        goto out;
    }
    long status = 0;
    curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
    if (status != 200) {
        /* The API server answers errors with a v1.Status whose message says why. */
        json_t *st = ans.data ? json_loads(ans.data, 0, NULL) : NULL;
        const char *msg = json_string_value(json_object_get(st, "message"));
        snprintf(err, errlen, "PATCH %s: the API server answered %ld%s%s", url, status,
                 msg ? ": " : "", msg ? msg : "");
        json_decref(st);
        goto out;
    }
    rc = 0;
out:
    free(ans.data);
    free(body);
    curl_slist_free_all(headers);
    curl_easy_cleanup(curl);
    explicit_bzero(token, sizeof token);
    explicit_bzero(auth, sizeof auth);
    return rc;
}
