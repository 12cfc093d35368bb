/* fuzz_ociargs.c — libFuzzer harness for the OCI shim's command-line parser
 * (src/integrations/oci/args.c). The input is split on NUL bytes into argv (argv[0] is the
 * shim). A parse either fails with a message or forwards every argument except the shim's own
 * options, in order, NULL-terminated, with the command, bundle and id pointing into argv. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"

#define MAX_ARGS 64

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int from_argv(char **argv, int argc, const char *p)
{
    for (int i = 0; i < argc; i++)
        if (argv[i] == p)
            return i;
    return -1;
}

/* p points into one of the argument strings (a value after '=' or a whole argument). */
static int inside(char **argv, int argc, const char *p)
{
    for (int i = 0; i < argc; i++)
        if (p >= argv[i] && p <= argv[i] + strlen(argv[i]))
            return 1;
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *copy = malloc(size + 1);
    if (!copy)
        return 0;
    memcpy(copy, data, size);
    copy[size] = '\0';
    char *argv[MAX_ARGS + 2];
    int argc = 0;
    argv[argc++] = (char *)"convgpu-runtime";
    for (size_t i = 0; i <= size && argc < MAX_ARGS;) {
        argv[argc++] = copy + i;
        i += strlen(copy + i) + 1;
    }
    if (size == 0)
        argc = 1;
    argv[argc] = NULL;

    struct oci_args a;
    char err[256] = "";
    if (oci_args_parse(argc, argv, &a, err, sizeof err) != 0) {
        if (!err[0] || a.fwd)
            abort();
        free(copy);
        return 0;
    }
    if (!a.fwd || a.fwd[0] != a.runtime || a.fwd[a.nfwd] != NULL || a.nfwd > argc ||
        a.nglobal < 0 || a.nglobal >= a.nfwd)
        abort();
    /* Forwarded arguments are argv's, in order; the ones left out (the shim's own options and
     * their values) are all global options, before the command. */
    char fwded[MAX_ARGS + 2] = {0};
    int last = 0;
    for (int i = 1; i < a.nfwd; i++) {
        int at = from_argv(argv, argc, a.fwd[i]);
        if (at <= last)
            abort();
        fwded[at] = 1;
        last = at;
    }
    for (int k = 1; k < argc; k++)
        if (!fwded[k] && a.cmd_index && k >= a.cmd_index)
            abort();
    if (a.command && (a.cmd_index <= 0 || argv[a.cmd_index] != a.command))
        abort();
    if (a.id && from_argv(argv, argc, a.id) < 0)
        abort();
    if ((a.bundle && !inside(argv, argc, a.bundle)) || (a.log_path && !inside(argv, argc, a.log_path)) ||
        (a.runtime_dir && !inside(argv, argc, a.runtime_dir)))
        abort();
    oci_args_free(&a);
    if (a.fwd)
        abort();
    free(copy);
    return 0;
}
