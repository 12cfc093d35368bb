/* main.c — convgpu, the command-line front end: global options and subcommand dispatch. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "http.h"

static const struct {
    const char *name;
    int (*fn)(int, char **);
    const char *summary;
} commands[] = {
    {"run", cmd_run, "run a command in a new container with a GPU-memory limit"},
    {"create", cmd_create, "register a container without running anything"},
    {"rm", cmd_rm, "remove a container; its memory returns at once"},
    {"ps", cmd_ps, "list containers: limit, assignment, use, state"},
    {"inspect", cmd_inspect, "show one container in detail (JSON)"},
    {"set", cmd_set, "change a container's GPU-memory limit while it runs"},
    {"swap", cmd_swap, "move a container's GPU memory to host memory (docs/SWAP.md)"},
    {"unswap", cmd_unswap, "bring a swapped-out container's GPU memory back"},
    {"devices", cmd_devices, "list GPUs: capacity, assigned, used, context charge"},
    {"topo", cmd_topo, "how the GPUs are wired (NVLink, PCIe), as nvidia-smi topo -m"},
    {"policy", cmd_policy, "show or change the resume and placement policies"},
    {"tenant", cmd_tenant, "list tenants, or set a tenant's fair-share weight"},
    {"top", cmd_top, "live view of devices, containers and decisions"},
    {"events", cmd_events, "print the daemon's decision events"},
    {"profile", cmd_profile, "what past runs taught: each job's peak memory, duration, use"},
    {"docker", cmd_docker, "docker run with a GPU-memory limit (the paper's nvidia-docker)"},
    {"setup", cmd_setup, "install the convgpu OCI runtime into Docker or Podman"},
    {"slurm", cmd_slurm, "print this node's Slurm gres.conf/slurm.conf lines (gres-conf)"},
    {"interfere", cmd_interfere, "measure how workloads sharing one GPU slow each other down"},
    {"k8s", cmd_k8s, "this node's per-GPU free units as a Kubernetes Node annotation"},
    {"cdi", cmd_cdi, "write a CDI spec: convgpu.io/gpu=N devices for Podman (generate)"},
    {"demo", cmd_demo, "see convgpu work: a private daemon on an emulated GPU, real processes"},
    {"sim", cg_sim_main, "simulate the scheduler on the paper's workload (no daemon needed)"},
};

static void usage(FILE *f)
{
    fprintf(f, "Usage: convgpu [--runtime-dir DIR] COMMAND [ARGS...]\n\n"
               "GPU-memory sharing for containers: every container gets a limit, and one that\n"
               "asks for more than is free waits instead of crashing.\n\nCommands:\n");
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].summary);
    fprintf(f, "\nGlobal options:\n"
               "  --runtime-dir DIR  the daemon's runtime directory (default /run/convgpu,\n"
               "                     or $CONVGPU_RUNTIME_DIR)\n"
               "  -h, --help         this help; COMMAND --help for a command's own\n"
               "  --version          print the version and exit\n");
}

bool cli_wants_help(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--") == 0)
            return false;
        if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0)
            return true;
    }
    return false;
}

int main(int argc, char **argv)
{
    int i = 1;
    while (i < argc && argv[i][0] == '-') {
        if (strcmp(argv[i], "--runtime-dir") == 0 && i + 1 < argc) {
            if (argv[i + 1][0] != '/') {
                fprintf(stderr, "convgpu: --runtime-dir must be an absolute path\n");
                return 2;
            }
            cli_set_runtime_dir(argv[i + 1]);
            i += 2;
        } else if (strncmp(argv[i], "--runtime-dir=", 14) == 0) {
            if (argv[i][14] != '/') {
                fprintf(stderr, "convgpu: --runtime-dir must be an absolute path\n");
                return 2;
            }
            cli_set_runtime_dir(argv[i] + 14);
            i++;
        } else if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            usage(stdout);
            return 0;
        } else if (strcmp(argv[i], "--version") == 0) {
            printf("convgpu %s\n", CONVGPU_VERSION);
            return 0;
        } else {
            fprintf(stderr, "convgpu: unknown option '%s' (see convgpu --help)\n", argv[i]);
            return 2;
        }
    }
    if (i >= argc) {
        usage(stderr);
        return 2;
    }
    for (size_t k = 0; k < sizeof commands / sizeof commands[0]; k++)
        if (strcmp(argv[i], commands[k].name) == 0)
            return commands[k].fn(argc - i, argv + i);
    fprintf(stderr, "convgpu: unknown command '%s' (see convgpu --help)\n", argv[i]);
    return 2;
}
