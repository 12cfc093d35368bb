/* fuzz_ocispec.c — libFuzzer harness for the OCI shim's reading of a bundle's config.json
 * (src/integrations/oci/spec.c): the request (oci_spec_request), and, for a configuration that
 * asks, the rewrite (oci_spec_inject) and the generated ld.so.preload (oci_preload_text). The
 * input is parsed the way oci_bundle_load parses config.json. A request is either refused with
 * a message or well-formed; the rewrite either fails with a message or leaves a JSON object. */
#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "spec.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    json_error_t je;
    json_t *config = json_loadb((const char *)data, size, 0, &je);
    if (!config)
        return 0;
    struct oci_request req;
    char err[1024] = "";
    if (oci_spec_request(config, &req, err, sizeof err) != 0) {
        if (!err[0])
            abort();
    } else if (req.wanted) {
        /* An exclusive container may ask for no size: it takes the GPU's capacity. */
        if ((req.bytes == 0 && !req.exclusive) || req.device < -1 || req.device > 1024 ||
            !req.source)
            abort();
        /* Kubernetes' GPU slots: distinct GPUs, as many as asked, a share of one GPU each. */
        if (req.ndevices > OCI_MAX_GPUS || (req.ndevices && req.gpus != req.ndevices) ||
            req.compute_pct > 100 || (req.ndevices && req.device != -1))
            abort();
        for (unsigned i = 0; i < req.ndevices; i++)
            for (unsigned k = i + 1; k < req.ndevices; k++)
                if (req.devices[i] == req.devices[k])
                    abort();
        json_t *env = json_pack("{s:s,s:s,s:s}", "LD_PRELOAD", "/opt/convgpu/libconvgpu.so",
                                "CONVGPU_SOCKET", "/run/convgpu/containers/x/container.sock",
                                "CUDA_VISIBLE_DEVICES", "GPU-0");
        static const char *const hook_args[] = {"--runtime-dir", "/run/convgpu", NULL};
        struct oci_inject in = {.container_dir = "/run/convgpu/containers/x",
                                .preload_file = "/run/convgpu/oci/x/ld.so.preload",
                                .env = env,
                                .hook_path = "/usr/bin/convgpu-runtime",
                                .hook_args = hook_args,
                                .nvidia = size & 1};
        err[0] = '\0';
        if (oci_spec_inject(config, &in, err, sizeof err) != 0) {
            if (!err[0])
                abort();
        } else if (!json_is_object(config)) {
            abort();
        } else {
            char *text = json_dumps(config, JSON_COMPACT);
            free(text);
        }
        json_decref(env);
    }
    json_decref(config);

    /* The image's own ld.so.preload is read from the image: any bytes. */
    char *image = malloc(size + 1);
    if (image) {
        memcpy(image, data, size);
        image[size] = '\0';
        char *text = oci_preload_text(image);
        if (!text || strncmp(text, OCI_CG_LIB "\n", sizeof OCI_CG_LIB) != 0)
            abort();
        free(text);
        free(image);
    }
    return 0;
}
