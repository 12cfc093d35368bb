/* args.c — decoding kube-scheduler's extender requests (the shapes are in args.h). */
#include "args.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "node_gpus.h"
#include "pod.h"
#include "profile_key.h"

/* A top-level field as Go's encoding/json finds it: an exact match first, else any case. */
static json_t *go_field(json_t *obj, const char *name)
{
    json_t *v = json_object_get(obj, name);
    if (v)
        return v;
    const char *key;
    json_object_foreach(obj, key, v)
        if (strcasecmp(key, name) == 0)
            return v;
    return NULL;
}

static json_t *load(const char *body, size_t len, char *err, size_t errlen)
{
    json_error_t jerr;
    json_t *root = json_loadb(body, len, JSON_REJECT_DUPLICATES, &jerr);
    if (!root) {
        snprintf(err, errlen, "the body is not JSON: %s (line %d, column %d)", jerr.text,
                 jerr.line, jerr.column);
        return NULL;
    }
    if (!json_is_object(root)) {
        snprintf(err, errlen, "the body is not a JSON object");
        json_decref(root);
        return NULL;
    }
    return root;
}

static int valid_name(const json_t *v)
{
    size_t n = json_string_length(v);
    return json_is_string(v) && n > 0 && n <= K8S_NODE_NAME_MAX &&
           strlen(json_string_value(v)) == n; /* no NUL inside */
}

static int decode_node(json_t *item, size_t i, struct k8s_node *n, char *err, size_t errlen)
{
    json_t *meta = json_object_get(item, "metadata");
    if (!json_is_object(item) || !json_is_object(meta)) {
        snprintf(err, errlen, "Nodes.items[%zu] has no metadata object", i);
        return -1;
    }
    json_t *name = json_object_get(meta, "name");
    if (!valid_name(name)) {
        snprintf(err, errlen, "Nodes.items[%zu].metadata.name must be a name of 1 to %d "
                              "characters",
                 i, K8S_NODE_NAME_MAX);
        return -1;
    }
    n->name = json_string_value(name);
    n->object = item;
    json_t *ann = json_object_get(meta, "annotations");
    if (ann && !json_is_null(ann)) {
        if (!json_is_object(ann)) {
            snprintf(err, errlen, "Nodes.items[%zu].metadata.annotations is not an object", i);
            return -1;
        }
        json_t *gpus = json_object_get(ann, K8S_GPUS_ANNOTATION);
        if (gpus && !json_is_string(gpus)) {
            snprintf(err, errlen, "Nodes.items[%zu].metadata.annotations[\"%s\"] is not a string",
                     i, K8S_GPUS_ANNOTATION);
            return -1;
        }
        if (gpus) {
            n->gpus = json_string_value(gpus);
            n->gpus_len = json_string_length(gpus);
        }
    }
    return 0;
}

int k8s_args_decode(const char *body, size_t len, struct k8s_args *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    json_t *root = load(body, len, err, errlen);
    if (!root)
        return -1;
    out->root = root;
    if (k8s_pod_request(go_field(root, "Pod"), &out->req, err, errlen) != 0)
        goto fail;
    json_t *app = json_object_get(json_object_get(json_object_get(go_field(root, "Pod"),
                                                                  "metadata"),
                                                  "annotations"),
                                  K8S_APP_ANNOTATION);
    if (app) {
        if (!json_is_string(app) || !cg_profile_key_valid(json_string_value(app))) {
            snprintf(err, errlen, "the pod's %s annotation must be a profile key (1-255 printable "
                                  "characters without spaces, quotes or backslashes)",
                     K8S_APP_ANNOTATION);
            goto fail;
        }
        out->app = json_string_value(app);
    }

    json_t *nodes = go_field(root, "Nodes"), *names = go_field(root, "NodeNames");
    if (nodes && !json_is_null(nodes)) {
        json_t *items = json_object_get(nodes, "items");
        if (!json_is_object(nodes) || !(json_is_array(items) || json_is_null(items))) {
            snprintf(err, errlen, "Nodes must be a v1.NodeList: {\"items\": [...]}");
            goto fail;
        }
        out->node_list = nodes;
        size_t n = json_array_size(items); /* 0 for null */
        out->nodes = calloc(n ? n : 1, sizeof *out->nodes);
        if (!out->nodes) {
            snprintf(err, errlen, "out of memory");
            goto fail;
        }
        for (size_t i = 0; i < n; i++)
            if (decode_node(json_array_get(items, i), i, &out->nodes[i], err, errlen) != 0)
                goto fail;
        out->nnodes = n;
    } else if (names && !json_is_null(names)) {
        if (!json_is_array(names)) {
            snprintf(err, errlen, "NodeNames must be an array of node names");
            goto fail;
        }
        size_t n = json_array_size(names);
        out->nodes = calloc(n ? n : 1, sizeof *out->nodes);
        if (!out->nodes) {
            snprintf(err, errlen, "out of memory");
            goto fail;
        }
        for (size_t i = 0; i < n; i++) {
            json_t *name = json_array_get(names, i);
            if (!valid_name(name)) {
                snprintf(err, errlen, "NodeNames[%zu] must be a name of 1 to %d characters", i,
                         K8S_NODE_NAME_MAX);
                goto fail;
            }
            out->nodes[i].name = json_string_value(name);
        }
        out->nnodes = n;
        out->by_name = true;
    } else {
        snprintf(err, errlen, "the request has neither Nodes nor NodeNames");
        goto fail;
    }
    return 0;
fail:
    k8s_args_free(out);
    return -1;
}

void k8s_args_free(struct k8s_args *a)
{
    free(a->nodes);
    json_decref(a->root);
    memset(a, 0, sizeof *a);
}

static int binding_string(json_t *root, const char *key, bool required, const char **out,
                          char *err, size_t errlen)
{
    json_t *v = go_field(root, key);
    *out = "";
    if (!v || json_is_null(v)) {
        if (!required)
            return 0;
        snprintf(err, errlen, "%s is missing", key);
        return -1;
    }
    if (!json_is_string(v) || (required && json_string_length(v) == 0)) {
        snprintf(err, errlen, "%s must be a%s string", key, required ? " non-empty" : "");
        return -1;
    }
    *out = json_string_value(v);
    return 0;
}

int k8s_binding_decode(const char *body, size_t len, struct k8s_binding *out, char *err,
                       size_t errlen)
{
    memset(out, 0, sizeof *out);
    json_t *root = load(body, len, err, errlen);
    if (!root)
        return -1;
    out->root = root;
    if (binding_string(root, "PodName", true, &out->pod_name, err, errlen) != 0 ||
        binding_string(root, "PodNamespace", false, &out->pod_namespace, err, errlen) != 0 ||
        binding_string(root, "PodUID", false, &out->pod_uid, err, errlen) != 0 ||
        binding_string(root, "Node", true, &out->node, err, errlen) != 0) {
        k8s_binding_free(out);
        return -1;
    }
    return 0;
}

void k8s_binding_free(struct k8s_binding *b)
{
    json_decref(b->root);
    memset(b, 0, sizeof *b);
}
