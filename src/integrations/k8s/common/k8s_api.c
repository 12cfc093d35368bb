/* k8s_api.c — requests to the Kubernetes API server with libcurl (k8s_api.h). */
#include "k8s_api.h"

#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_TOKEN 16384
#define MAX_ANSWER (1u << 20)

void k8s_api_sa_defaults(struct k8s_api *api)
{
    snprintf(api->token_file, sizeof api->token_file, "%s", K8S_SA_DIR "/token");
    snprintf(api->ca_file, sizeof api->ca_file, "%s", K8S_SA_DIR "/ca.crt");
}

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

/* One handle per thread, kept: its connection to the API server is reused. reset clears the
 * options, not the connection cache. */
static __thread CURL *kept;

void k8s_api_close(void)
{
    if (kept)
        curl_easy_cleanup(kept);
    kept = NULL;
}

long k8s_api_request(const struct k8s_api *api, const char *method, const char *path,
                     const char *content_type, json_t *body, json_t **answer, char *err,
                     size_t errlen)
{
    char url[1024], token[MAX_TOKEN], auth[MAX_TOKEN + 32], ctype[128];
    *answer = NULL;
    if (snprintf(url, sizeof url, "%s%s", api->server, path) >= (int)sizeof url) {
        snprintf(err, errlen, "the API server's URL is too long");
        return 0;
    }
    auth[0] = '\0';
    if (api->token_file[0]) {
        int rc = read_token(api->token_file, token, sizeof token, err, errlen);
        if (rc == 0)
            snprintf(auth, sizeof auth, "Authorization: Bearer %s", token);
        explicit_bzero(token, sizeof token);
        if (rc != 0)
            return 0;
    }
    snprintf(ctype, sizeof ctype, "Content-Type: %s",
             content_type ? content_type : "application/json");
    char *text = body ? json_dumps(body, JSON_COMPACT) : NULL;
    if (!kept)
        kept = curl_easy_init();
    else
        curl_easy_reset(kept);
    CURL *curl = kept;
    struct curl_slist *headers = NULL;
    const char *hs[] = {"Accept: application/json", ctype, auth};
    for (size_t i = 0; i < sizeof hs / sizeof hs[0] && curl; i++) {
        if (!hs[i][0])
            continue;
        struct curl_slist *h = curl_slist_append(headers, hs[i]);
        if (!h) {
            curl = NULL;
            break;
        }
        headers = h;
    }
    long status = 0;
    struct answer ans = {0};
    char curl_err[CURL_ERROR_SIZE] = "";
    if (!curl || (body && !text)) {
        snprintf(err, errlen, "out of memory");
        goto out;
    }
    curl_easy_setopt(curl, CURLOPT_URL, url);
    curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, method);
    if (text) {
        curl_easy_setopt(curl, CURLOPT_POSTFIELDS, text);
        curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE, (long)strlen(text));
    }
    curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, collect);
    curl_easy_setopt(curl, CURLOPT_WRITEDATA, &ans);
    curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, curl_err);
    curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT, 10L);
    curl_easy_setopt(curl, CURLOPT_TIMEOUT, 30L);
    curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(curl, CURLOPT_FOLLOWLOCATION, 0L); /* the token goes nowhere else */
    if (api->ca_file[0])
        curl_easy_setopt(curl, CURLOPT_CAINFO, api->ca_file);
    CURLcode cc = curl_easy_perform(curl);
    if (cc != CURLE_OK) {
        snprintf(err, errlen, "%s %s: %s", method, url,
                 curl_err[0] ? curl_err : curl_easy_strerror(cc));
        goto out;
    }
    curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
    *answer = ans.data ? json_loads(ans.data, 0, NULL) : NULL;
    if (status < 200 || status > 299) {
        /* The API server answers errors with a v1.Status whose message says why. */
        const char *msg = json_string_value(json_object_get(*answer, "message"));
        snprintf(err, errlen, "%s %s: the API server answered %ld%s%.300s", method, path, status,
                 msg ? ": " : "", msg ? msg : "");
    }
out:
    if (curl) /* what it pointed into ends with this call */
        curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, NULL);
    explicit_bzero(auth, sizeof auth);
    free(ans.data);
    free(text);
    curl_slist_free_all(headers);
    return status;
}
