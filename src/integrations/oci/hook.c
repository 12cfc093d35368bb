/* hook.c — `convgpu-runtime hook create-runtime|poststop`: the OCI hooks the shim adds. runc
 * runs them with the container's state JSON on stdin (id, pid, status, bundle, annotations).
 * create-runtime reports the init pid to the daemon (which then also removes the container when
 * that process exits) and fails the create if the registration is gone; poststop releases the
 * container (its failure is only logged by runc). The shim adds them only where it cannot do
 * this itself: `run`, and `create` without --pid-file. */
#include "hook.h"

#include <stdio.h>
#include <string.h>

#include "cdi_hook.h"
#include "control.h"
#include "log.h"
#include "state.h"

static void usage(FILE *f)
{
    fprintf(f, "Usage: convgpu-runtime [--runtime-dir DIR] [--log FILE] hook create-runtime|poststop\n"
               "       convgpu-runtime [--runtime-dir DIR] hook cdi-create-runtime --device INDEX\n\n"
               "Run by the OCI runtime with the container's state JSON on stdin:\n"
               "  create-runtime      reports the container's init pid to convgpud (fails if not registered)\n"
               "  poststop            releases the container: its GPU memory returns at once\n"
               "  cdi-create-runtime  registers a container that asked for\n"
               "                      convgpu.io/gpu=INDEX (--device INDEX)\n"
               "                      (`convgpu cdi generate`'s CDI spec) and wires it in\n");
}

int oci_hook_main(int argc, char **argv)
{
    if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    const char *what = argv[1];
    if (strcmp(what, "cdi-create-runtime") == 0)
        return oci_cdi_hook_main(argc, argv);
    bool create = strcmp(what, "create-runtime") == 0;
    if (!create && strcmp(what, "poststop") != 0) {
        fprintf(stderr, "convgpu-runtime hook: unknown hook '%s' (create-runtime, poststop or "
                        "cdi-create-runtime)\n", what);
        return 2;
    }
    json_error_t je;
    json_t *state = json_loadf(stdin, JSON_DISABLE_EOF_CHECK, &je);
    const char *id = json_string_value(json_object_get(state, "id"));
    if (!json_is_object(state) || !id || !*id) {
        oci_log(OCI_LOG_ERROR, "hook %s: stdin is not an OCI state with an \"id\"%s%s", what,
                state ? "" : ": ", state ? "" : je.text);
        json_decref(state);
        return 1;
    }
    char err[1024];
    int rc = 0;
    if (create) {
        json_t *pidv = json_object_get(state, "pid");
        json_int_t pid = json_integer_value(pidv);
        const char *status = json_string_value(json_object_get(state, "status"));
        const char *bundle = json_string_value(json_object_get(state, "bundle"));
        if (!json_is_integer(pidv) || pid <= 0) {
            oci_log(OCI_LOG_ERROR, "hook create-runtime: container %s: state has no init pid", id);
            rc = 1;
        } else {
            int reg = oci_started(id, (long)pid, err, sizeof err);
            if (reg == 1) {
                oci_log(OCI_LOG_ERROR, "hook create-runtime: container %s is not registered with "
                                       "convgpud (was it removed with convgpu rm?)", id);
                rc = 1;
            } else {
                if (reg < 0)
                    oci_log(OCI_LOG_WARN, "hook create-runtime: %s", err);
                oci_log(OCI_LOG_INFO, "container %s: init pid %lld (status %s, bundle %s)", id,
                        (long long)pid, status ? status : "?", bundle ? bundle : "?");
            }
        }
    } else {
        if (oci_release(id, err, sizeof err) != 0)
            oci_log(OCI_LOG_WARN, "hook poststop: %s", err);
        else
            oci_log(OCI_LOG_INFO, "container %s stopped: released", id);
        oci_state_remove(id);
    }
    json_decref(state);
    return rc;
}
