/* cmd_slurm.c — `convgpu slurm gres-conf`: the lines that make this node's GPU memory (and
 * compute) consumable resources in Slurm, from the node daemon's own devices, so that
 * slurmctld's count and convgpud's capacity cannot disagree.
 *
 * Units: `gpumem` counts MiB of what the devices promise, rounded down: their capacity (total
 * minus the daemon's reserve) times the sharing factor (`convgpud --oversubscribe`; 1 unless
 * set, and a daemon before it publishes no "promised": its capacity then); `gpucompute`
 * counts percent of one GPU's time, 100 per GPU. The job_submit filter
 * (src/integrations/slurm/job_submit.lua) turns --gpu-mem/--gpu-compute into requests for
 * them, rounded up, so a job is never scheduled on memory the daemon would not give it (with a
 * factor above 1 it may have to wait for it: convgpud suspends, it does not refuse).
 * Both are counted per node: a request that fits the node's sum but no single GPU is admitted
 * by Slurm and refused by convgpud when its step starts (docs/SLURM.md, limits).
 *
 * --apply also tells the running slurmctld: `scontrol update NodeName=N Gres=gpumem:M,...`
 * (run without a shell, scontrol from PATH), so that a changed factor (a new
 * --oversubscribe, or adaptive moving) reaches the scheduler without a restart. Slurm keeps such
 * an update only until slurmctld reads slurm.conf again, so the printed lines still belong in
 * slurm.conf and gres.conf (docs/SLURM.md, "Sharing factor"). */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "http.h"

#define MIB (1ull << 20)

static int usage(FILE *f, int rc)
{
    fprintf(f, "Usage: convgpu slurm gres-conf [--node NAME] [--apply]\n\n"
               "Prints this node's gres.conf line and the slurm.conf settings that make GPU\n"
               "memory (gpumem, in MiB) and compute (gpucompute, percent) consumable per node,\n"
               "from the daemon's devices. NAME: the node's Slurm name (default: hostname -s).\n"
               "  --apply   also set them in the running slurmctld (scontrol update NodeName=NAME\n"
               "            Gres=...): a changed sharing factor takes effect without a restart;\n"
               "            slurmctld forgets it when it rereads slurm.conf, so keep that in step\n");
    return rc;
}

/* A Slurm node name: what NodeName= accepts without quoting, and what hostname -s gives. */
static int valid_node_name(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n > 64)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
              (s[i] >= '0' && s[i] <= '9') || s[i] == '-' || s[i] == '_'))
            return 0;
    return 1;
}

/* scontrol update NodeName=node Gres=gres, without a shell. Returns 0, or 1 with the reason. */
static int apply(const char *node, const char *gres)
{
    char name[96], value[128];
    snprintf(name, sizeof name, "NodeName=%s", node);
    snprintf(value, sizeof value, "Gres=%s", gres);
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0) {
        fprintf(stderr, "convgpu slurm gres-conf --apply: fork: %s\n", strerror(errno));
        return 1;
    }
    if (pid == 0) {
        execlp("scontrol", "scontrol", "update", name, value, (char *)NULL);
        fprintf(stderr, "convgpu slurm gres-conf --apply: cannot run scontrol: %s\n",
                strerror(errno));
        _exit(127);
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        fprintf(stderr, "convgpu slurm gres-conf --apply: scontrol update %s %s failed (%s %d)\n",
                name, value, WIFEXITED(status) ? "exit" : "signal",
                WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
        return 1;
    }
    printf("# applied: scontrol update %s %s\n", name, value);
    return 0;
}

static int gres_conf(const char *node, bool do_apply)
{
    json_t *ans = NULL;
    char terr[512] = "";
    long st = cli_request("GET", "/v1/devices", NULL, &ans, terr, sizeof terr);
    if (st != 200 || !json_is_array(ans)) {
        cli_report_error(st, ans, terr);
        json_decref(ans);
        return 1;
    }
    unsigned long long mib = 0, physical = 0;
    size_t ngpu = json_array_size(ans), i;
    json_t *dev;
    json_array_foreach(ans, i, dev) {
        json_t *cap = json_object_get(dev, "capacity"), *prom = json_object_get(dev, "promised");
        if (!json_is_integer(cap) || json_integer_value(cap) < 0 ||
            (prom && (!json_is_integer(prom) ||
                      json_integer_value(prom) < json_integer_value(cap)))) {
            fprintf(stderr, "convgpu slurm: device %zu has no valid capacity (or promised "
                            "memory) in the daemon's answer\n", i);
            json_decref(ans);
            return 1;
        }
        physical += (unsigned long long)json_integer_value(cap) / MIB;
        mib += (unsigned long long)json_integer_value(prom ? prom : cap) / MIB;
    }
    json_decref(ans);
    if (ngpu == 0 || mib == 0) {
        fprintf(stderr, "convgpu slurm: the daemon has no GPU memory to offer\n");
        return 1;
    }
    if (mib > physical)
        printf("# gpumem promises %llu MiB of the %llu MiB the GPUs have (convgpud "
               "--oversubscribe):\n# jobs whose peaks collide wait for memory instead of "
               "failing\n", mib, physical);
    printf("# gres.conf on %s (or in the cluster's shared gres.conf):\n", node);
    printf("NodeName=%s Name=gpumem Count=%llu\n", node, mib);
    printf("NodeName=%s Name=gpucompute Count=%zu\n", node, ngpu * 100);
    printf("# slurm.conf, once for the cluster:\n");
    printf("# GresTypes=gpumem,gpucompute\n");
    printf("# JobSubmitPlugins=lua   (with convgpu's job_submit.lua)\n");
    printf("# slurm.conf, on this node's NodeName=%s line:\n", node);
    printf("# Gres=gpumem:%llu,gpucompute:%zu\n", mib, ngpu * 100);
    if (!do_apply)
        return 0;
    char gres[96];
    snprintf(gres, sizeof gres, "gpumem:%llu,gpucompute:%zu", mib, ngpu * 100);
    return apply(node, gres);
}

int cmd_slurm(int argc, char **argv)
{
    if (cli_wants_help(argc, argv))
        return usage(stdout, 0);
    if (argc < 2 || strcmp(argv[1], "gres-conf") != 0)
        return usage(stderr, 2);
    char host[HOST_NAME_MAX + 1] = "";
    const char *node = NULL;
    bool do_apply = false;
    for (int i = 2; i < argc; i++) {
        if (strcmp(argv[i], "--node") == 0 && i + 1 < argc) {
            node = argv[++i];
        } else if (strcmp(argv[i], "--apply") == 0) {
            do_apply = true;
        } else {
            fprintf(stderr, "convgpu slurm gres-conf: unknown argument '%s'\n", argv[i]);
            return usage(stderr, 2);
        }
    }
    if (!node) {
        if (gethostname(host, sizeof host) != 0) {
            fprintf(stderr, "convgpu slurm gres-conf: no hostname; give --node NAME\n");
            return 2;
        }
        host[strcspn(host, ".")] = '\0'; /* Slurm's node names are short names */
        node = host;
    }
    if (!valid_node_name(node)) {
        fprintf(stderr, "convgpu slurm gres-conf: '%s' is not a node name (letters, digits, "
                        "- and _, at most 64)\n", node);
        return 2;
    }
    return gres_conf(node, do_apply);
}
