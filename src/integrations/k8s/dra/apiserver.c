/* apiserver.c — the driver's requests to the Kubernetes API server, with libcurl (dra.h): GET a
 * ResourceClaim, create or replace this node's ResourceSlices. The service account's token is
 * read for every request (projected tokens rotate); answers are bounded (1 MiB) and decoded with
 * jansson; redirects are not followed (the token goes nowhere else); each thread keeps its
 * connection. */
#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dra.h"

#define MAX_ANSWER (1u << 20)
#define MAX_TOKEN 8192

struct answer {
    char *data;
    size_t len;
};

static size_t collect(char *ptr, size_t size, size_t nmemb, void *ctx)
{
    struct answer *a = ctx;
    size_t n = size * nmemb;
    if (a->len + n > MAX_ANSWER)
        return 0;
    char *nd = realloc(a->data, a->len + n + 1);
    if (!nd)
        return 0;
    memcpy(nd + a->len, ptr, n);
    a->data = nd;
    a->len += n;
    a->data[a->len] = '\0';
    return n;
}

static int read_token(const char *path, char *tok, size_t len, char *err, size_t errlen)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    ssize_t n = fd >= 0 ? read(fd, tok, len - 1) : -1;
    if (fd >= 0)
        close(fd);
    if (n <= 0 || (size_t)n >= len - 1) {
        snprintf(err, errlen, "cannot read the token %s%s%s", path, n < 0 ? ": " : "",
                 n < 0 ? strerror(errno) : " (empty or too long)");
        return -1;
    }
    tok[n] = '\0';
    tok[strcspn(tok, "\r\n")] = '\0';
    for (const char *p = tok; *p; p++)
        if (*p < 0x21 || *p > 0x7e) {
            snprintf(err, errlen, "the token %s holds a character a header cannot carry", path);
            return -1;
        }
    return tok[0] ? 0 : -1;
}

long dra_api_request(const struct dra_api *api, const char *method, const char *path, json_t *body,
                     json_t **answer, char *err, size_t errlen)
{
    char url[1024], token[MAX_TOKEN], auth[MAX_TOKEN + 32];
    *answer = NULL;
    if (snprintf(url, sizeof url, "%s%s", api->server, path) >= (int)sizeof url) {
        snprintf(err, errlen, "the URL is too long");
        return 0;
    }
    auth[0] = '\0';
    if (api->token_file[0]) {
        if (read_token(api->token_file, token, sizeof token, err, errlen) != 0)
            return 0;
        snprintf(auth, sizeof auth, "Authorization: Bearer %s", token);
        explicit_bzero(token, sizeof token);
    }
    char *text = body ? json_dumps(body, JSON_COMPACT) : NULL;
    /* One handle per thread, kept: its connection to the API server is reused (kubelet waits on
     * a prepare, and a new TLS connection per claim is most of one). reset clears the options,
     * not the connection cache. */
    static __thread CURL *kept;
    if (!kept)
        kept = curl_easy_init();
    else
        curl_easy_reset(kept);
    CURL *curl = kept;
    struct curl_slist *headers = NULL;
    const char *hs[] = {"Accept: application/json", "Content-Type: application/json", auth};
    for (size_t i = 0; i < 3 && curl; i++) {
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
    curl_easy_setopt(curl, CURLOPT_FOLLOWLOCATION, 0L);
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
        const char *msg = json_string_value(json_object_get(*answer, "message"));
        snprintf(err, errlen, "%s %s: the API server answered %ld%s%.300s", method, path, status,
                 msg ? ": " : "", msg ? msg : "");
    }
out:
    explicit_bzero(auth, sizeof auth);
    free(ans.data);
    free(text);
    curl_slist_free_all(headers);
    return status;
}

int dra_publish(const struct dra_api *api, json_t *slices, char *err, size_t errlen)
{
    size_t i;
    json_t *s;
    json_array_foreach(slices, i, s) {
        const char *name = json_string_value(json_object_get(json_object_get(s, "metadata"),
                                                             "name"));
        char path[512];
        json_t *ans = NULL;
        long st = dra_api_request(api, "POST", "/apis/" DRA_API_GROUP "/resourceslices", s, &ans,
                                  err, errlen);
        json_decref(ans);
        if (st == 201 || st == 200)
            continue;
        if (st != 409)
            return -1;
        /* It exists (an earlier run): replace it, at the version the server holds. */
        snprintf(path, sizeof path, "/apis/" DRA_API_GROUP "/resourceslices/%s", name);
        st = dra_api_request(api, "GET", path, NULL, &ans, err, errlen);
        json_t *rv = json_object_get(json_object_get(ans, "metadata"), "resourceVersion");
        if (st != 200 || !json_is_string(rv)) {
            json_decref(ans);
            if (st == 200)
                snprintf(err, errlen, "GET %s: no metadata.resourceVersion", path);
            return -1;
        }
        json_t *copy = json_deep_copy(s);
        json_object_set(json_object_get(copy, "metadata"), "resourceVersion", rv);
        json_decref(ans);
        st = dra_api_request(api, "PUT", path, copy, &ans, err, errlen);
        json_decref(copy);
        json_decref(ans);
        if (st != 200)
            return -1;
    }
    return 0;
}
