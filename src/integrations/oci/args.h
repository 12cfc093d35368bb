/* args.h — the OCI runtime command line as runc and crun take it: global options, the command,
 * its options and the container id; the shim's own options are taken out before the real
 * runtime sees the rest. */
#ifndef CONVGPU_OCI_ARGS_H
#define CONVGPU_OCI_ARGS_H

#include <stdbool.h>
#include <stddef.h>

struct oci_args {
    /* The shim's own options (taken out of the forwarded command line). */
    const char *runtime;     /* --runtime PATH, else $CONVGPU_RUNC, else "runc" */
    const char *runtime_dir; /* --runtime-dir DIR, or NULL */
    /* runc's global options the shim reads (and forwards untouched). */
    const char *log_path;   /* --log FILE */
    const char *log_format; /* --log-format text|json */
    /* The command and what the shim needs from it. */
    const char *command; /* "create", "run", "delete", ... or NULL */
    int cmd_index;       /* its index in argv, 0 when there is none */
    const char *bundle;  /* --bundle/-b of create and run, NULL: the current directory */
    const char *pid_file; /* --pid-file of create and run: where the runtime writes the init pid */
    const char *id;      /* the last positional argument after the command */
    bool detach;         /* run --detach/-d */
    /* The command line for the real runtime: fwd[0] = runtime, then every argument but the
     * shim's own options, in order; NULL-terminated. fwd[1..nglobal] are the global options. */
    char **fwd;
    int nfwd;
    int nglobal;
};

/* Parses argv (argv[0] is the shim). Returns 0, or -1 with a message in err. a->fwd is
 * allocated; release it with oci_args_free. */
int oci_args_parse(int argc, char **argv, struct oci_args *a, char *err, size_t errlen);
void oci_args_free(struct oci_args *a);

#endif
