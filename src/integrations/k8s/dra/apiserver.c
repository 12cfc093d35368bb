/* apiserver.c — this node's ResourceSlices created, or replaced at the version the server holds
 * (dra.h), through the API server client (k8s_api.h). */
#include <stdio.h>

#include "dra.h"

int dra_publish(const struct k8s_api *api, json_t *slices, char *err, size_t errlen)
{
    size_t i;
    json_t *s;
    json_array_foreach(slices, i, s) {
        const char *name = json_string_value(json_object_get(json_object_get(s, "metadata"),
                                                             "name"));
        char path[512];
        json_t *ans = NULL;
        long st = k8s_api_request(api, "POST", "/apis/" DRA_API_GROUP "/resourceslices", NULL, s, &ans,
                                  err, errlen);
        json_decref(ans);
        if (st == 201 || st == 200)
            continue;
        if (st != 409)
            return -1;
        /* It exists (an earlier run): replace it, at the version the server holds. */
        snprintf(path, sizeof path, "/apis/" DRA_API_GROUP "/resourceslices/%s", name);
        st = k8s_api_request(api, "GET", path, NULL, NULL, &ans, err, errlen);
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
        st = k8s_api_request(api, "PUT", path, NULL, copy, &ans, err, errlen);
        json_decref(copy);
        json_decref(ans);
        if (st != 200)
            return -1;
    }
    return 0;
}
