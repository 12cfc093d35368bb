/* main.c — convgpu, the command-line front end: global options and subcommand dispatch. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "http.h"

/* `local`: the command's arguments are all its own (none is handed to another program), so
 * the global --runtime-dir may also follow the command, as cdi generate takes it. */
static const struct {
    const char *name;
    int (*fn)(int, char **);
    const char *summary;
    bool local;
} commands[] = {
    {"run", cmd_run, "run a command in a new container with a GPU-memory limit", false},
    {"create", cmd_create, "register a container without running anything", true},
    {"rm", cmd_rm, "remove a container; its memory returns at once", true},
    {"ps", cmd_ps, "list containers: limit, assignment, use, state", true},
    {"inspect", cmd_inspect, "show one container in detail (JSON)", true},
    {"set", cmd_set, "change a container's GPU-memory limit while it runs", true},
    {"swap", cmd_swap, "move a container's GPU memory to host memory (docs/SWAP.md)", true},
    {"unswap", cmd_unswap, "bring a swapped-out container's GPU memory back", true},
    {"pause", cmd_pause, "checkpoint a container's processes: GPU memory and contexts freed", true},
    {"resume", cmd_resume, "restore a paused container's processes, bit for bit", true},
    {"move", cmd_move, "move a container to another GPU of the same model", true},
    {"devices", cmd_devices, "list GPUs: capacity, assigned, used, context charge", true},
    {"topo", cmd_topo, "how the GPUs are wired (NVLink, PCIe), as nvidia-smi topo -m", true},
    {"policy", cmd_policy, "show or change the resume and placement policies", true},
    {"tenant", cmd_tenant, "list tenants, or set a tenant's fair-share weight", true},
    {"top", cmd_top, "live view of devices, containers and decisions", true},
    {"events", cmd_events, "print the daemon's decision events", true},
    {"profile", cmd_profile, "what past runs taught: each job's peak memory, duration, use", true},
    {"docker", cmd_docker, "docker run with a GPU-memory limit (the paper's nvidia-docker)", false},
    {"doctor", cmd_doctor, "check this node's convgpu pieces together; says how to fix each", true},
    {"setup", cmd_setup, "install the convgpu OCI runtime into Docker or Podman", false},
    {"slurm", cmd_slurm, "print this node's Slurm gres.conf/slurm.conf lines (gres-conf)", false},
    {"interfere", cmd_interfere, "measure how workloads sharing one GPU slow each other down", false},
    {"k8s", cmd_k8s, "this node's per-GPU free units as a Kubernetes Node annotation", false},
    {"cdi", cmd_cdi, "write a CDI spec: convgpu.io/gpu=N devices for Podman (generate)", false},
    {"demo", cmd_demo, "see convgpu work: a private daemon on an emulated GPU, real processes", false},
    {"sim", cg_sim_main, "simulate the scheduler on the paper's workload (no daemon needed)", false},
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
               "                     or $CONVGPU_RUNTIME_DIR); the commands that run nothing\n"
               "                     (all but run, docker, interfere, demo, sim, slurm, k8s,\n"
               "                     setup) also take it after the command\n"
               "  -h, --help         this help; COMMAND --help for a command's own\n"
               "  --version          print the version and exit\n"
               "\nExit status:\n"
               "  0    success\n"
               "  1    failure: the daemon refused the request or could not be reached\n"
               "  2    bad usage: an unknown option, a bad value (nothing was sent)\n"
               "  3    no such container (or profile, tenant): the daemon answered 404\n"
               "  125  run, docker run: the container could not be created (the command\n"
               "       did not run); otherwise run exits with the command's status (126: it\n"
               "       cannot be executed, 127: not found, 128+N: killed by signal N)\n");
}

/* Takes `--runtime-dir DIR` / `--runtime-dir=DIR` out of a local command's arguments (before
 * any `--`). Returns 0, or 2 after a message. */
static int take_runtime_dir(int *argc, char **argv)
{
    int out = 1;
    bool rest = false;
    for (int i = 1; i < *argc; i++) {
        const char *dir = NULL;
        if (!rest && strcmp(argv[i], "--") == 0)
            rest = true;
        else if (!rest && strcmp(argv[i], "--runtime-dir") == 0 && i + 1 < *argc)
            dir = argv[++i];
        else if (!rest && strncmp(argv[i], "--runtime-dir=", 14) == 0)
            dir = argv[i] + 14;
        if (!dir) {
            argv[out++] = argv[i];
            continue;
        }
        if (dir[0] != '/') {
            fprintf(stderr, "convgpu: --runtime-dir must be an absolute path\n");
            return 2;
        }
        cli_set_runtime_dir(dir);
    }
    argv[out] = NULL;
    *argc = out;
    return 0;
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
    for (size_t k = 0; k < sizeof commands / sizeof commands[0]; k++) {
        if (strcmp(argv[i], commands[k].name) != 0)
            continue;
        int n = argc - i;
        if (commands[k].local && take_runtime_dir(&n, argv + i) != 0)
            return 2;
        return commands[k].fn(n, argv + i);
    }
    fprintf(stderr, "convgpu: unknown command '%s' (see convgpu --help)\n", argv[i]);
    return 2;
}
