/* args.c — parsing runc's command line without changing it. Global options come before the
 * command (Go flag syntax: -x or --x, a value as the next argument or after '='); unknown global
 * options are taken as flags without a value, which is what runc and crun have besides these. */
#include "args.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Global options of runc and crun that take a value. */
static const char *const global_values[] = {"log", "log-format", "root", "criu", "rootless",
                                            "cgroup-manager", NULL};
/* Options of create, run and delete that take a value. */
static const char *const command_values[] = {"bundle", "b", "console-socket", "pid-file",
                                             "preserve-fds", NULL};

static bool in(const char *const *list, const char *name, size_t len)
{
    for (; *list; list++)
        if (strlen(*list) == len && strncmp(*list, name, len) == 0)
            return true;
    return false;
}

/* Splits "-x", "--x" or "--x=v" into the name (without dashes) and the value after '='. */
static const char *option_name(const char *arg, size_t *len, const char **value)
{
    const char *n = arg + (arg[1] == '-' ? 2 : 1);
    const char *eq = strchr(n, '=');
    *len = eq ? (size_t)(eq - n) : strlen(n);
    *value = eq ? eq + 1 : NULL;
    return n;
}

static bool is_option(const char *arg)
{
    return arg[0] == '-' && arg[1] != '\0' && strcmp(arg, "--") != 0;
}

int oci_args_parse(int argc, char **argv, struct oci_args *a, char *err, size_t errlen)
{
    memset(a, 0, sizeof *a);
    a->fwd = calloc((size_t)argc + 1, sizeof *a->fwd);
    if (!a->fwd) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    const char *env = getenv("CONVGPU_RUNC");
    a->runtime = env && *env ? env : "runc";
    a->nfwd = 1;
    int i = 1;
    for (; i < argc && is_option(argv[i]); i++) {
        size_t len;
        const char *value;
        const char *name = option_name(argv[i], &len, &value);
        bool ours = (len == 7 && strncmp(name, "runtime", 7) == 0) ||
                    (len == 11 && strncmp(name, "runtime-dir", 11) == 0);
        bool takes = ours || in(global_values, name, len), next = false;
        if (takes && !value) {
            if (i + 1 >= argc) {
                snprintf(err, errlen, "option %s needs a value", argv[i]);
                oci_args_free(a);
                return -1;
            }
            value = argv[i + 1];
            next = true;
        }
        if (ours) {
            if (len == 7)
                a->runtime = value;
            else
                a->runtime_dir = value;
        } else {
            if (len == 3 && strncmp(name, "log", 3) == 0)
                a->log_path = value;
            else if (len == 10 && strncmp(name, "log-format", 10) == 0)
                a->log_format = value;
            a->fwd[a->nfwd++] = argv[i];
            if (next)
                a->fwd[a->nfwd++] = argv[i + 1];
        }
        if (next)
            i++;
    }
    a->nglobal = a->nfwd - 1;
    if (i < argc) {
        a->command = argv[i];
        a->cmd_index = i;
        a->fwd[a->nfwd++] = argv[i++];
    }
    bool positional_only = false;
    for (; i < argc; i++) {
        a->fwd[a->nfwd++] = argv[i];
        if (positional_only || !is_option(argv[i])) {
            positional_only = positional_only || strcmp(argv[i], "--") == 0;
            if (strcmp(argv[i], "--") != 0)
                a->id = argv[i];
            continue;
        }
        if (strcmp(argv[i], "--") == 0) {
            positional_only = true;
            continue;
        }
        size_t len;
        const char *value;
        const char *name = option_name(argv[i], &len, &value);
        if ((len == 6 && strncmp(name, "detach", 6) == 0) || (len == 1 && name[0] == 'd'))
            a->detach = true;
        if (!in(command_values, name, len))
            continue;
        if (!value) {
            if (i + 1 >= argc) {
                snprintf(err, errlen, "option %s needs a value", argv[i]);
                oci_args_free(a);
                return -1;
            }
            value = argv[++i];
            a->fwd[a->nfwd++] = argv[i];
        }
        if (len == 6 || len == 1) /* bundle or b */
            a->bundle = value;
        else if (len == 8 && strncmp(name, "pid-file", 8) == 0)
            a->pid_file = value;
    }
    a->fwd[0] = (char *)a->runtime;
    a->fwd[a->nfwd] = NULL;
    return 0;
}

void oci_args_free(struct oci_args *a)
{
    free(a->fwd);
    a->fwd = NULL;
}
