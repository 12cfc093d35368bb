/* patch.c — one annotation PATCHed onto a Node (the request is in patch.h). */
#include "patch.h"

#include <jansson.h>
#include <stdio.h>

int k8s_patch_annotation(const struct k8s_api *api, const char *node, const char *key,
                         const char *value, char *err, size_t errlen)
{
    if (!k8s_valid_node_name(node)) {
        snprintf(err, errlen, "'%s' is not a Node name", node);
        return -1;
    }
    char path[320];
    snprintf(path, sizeof path, "/api/v1/nodes/%s", node);
    json_t *patch = json_pack("{s:{s:{s:s}}}", "metadata", "annotations", key, value);
    if (!patch) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    json_t *ans = NULL;
    long status = k8s_api_request(api, "PATCH", path, "application/merge-patch+json", patch,
                                  &ans, err, errlen);
    json_decref(patch);
    json_decref(ans);
    if (status == 200)
        return 0;
    if (status >= 200 && status <= 299) /* not an error to the client: not the answer asked */
        snprintf(err, errlen, "PATCH %s: the API server answered %ld", path, status);
    return -1;
}
