/* cmd_topo.c — `convgpu topo`: how the node's GPUs are wired, as the daemon read it from NVML
 * (GET /v1/devices, each device's "topology" and "nvlinks"), printed as `nvidia-smi topo -m`
 * prints it, so an operator can check at a glance what multi-GPU placement will prefer. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "http.h"

static int usage(FILE *f, int rc)
{
    fprintf(f, "Usage: convgpu topo [--json]\n\n"
               "Prints the link between every two GPUs as the daemon sees it (read from NVML at\n"
               "its start): NV# (# NVLinks), PIX, PXB, PHB, NODE or SYS, nearest first; multi-GPU\n"
               "containers are placed where the sum over their pairs is least (docs/SCHEDULING.md).\n"
               "  --json   the matrix as JSON: {\"topology\": {\"0\": {\"1\": \"nvlink\", ...}, ...},\n"
               "           \"nvlinks\": {\"0\": {\"1\": 2}, ...}}\n");
    return rc;
}

/* nvidia-smi's name of a level (NV# is made by the caller). */
static const char *short_name(const char *level)
{
    static const char *const names[][2] = {
        {"single", "PIX"}, {"multiple", "PXB"}, {"hostbridge", "PHB"},
        {"node", "NODE"},  {"system", "SYS"},
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (level && strcmp(level, names[i][0]) == 0)
            return names[i][1];
    return "?";
}

static void print_matrix(json_t *devices)
{
    size_t n = json_array_size(devices);
    printf("      ");
    for (size_t j = 0; j < n; j++)
        printf(j + 1 < n ? " GPU%-3zu" : " GPU%zu", j);
    printf("\n");
    for (size_t i = 0; i < n; i++) {
        json_t *dev = json_array_get(devices, i);
        json_t *topo = json_object_get(dev, "topology"), *links = json_object_get(dev, "nvlinks");
        printf("GPU%-3zu", i);
        for (size_t j = 0; j < n; j++) {
            char key[24], cell[16];
            snprintf(key, sizeof key, "%zu", j);
            const char *level = json_string_value(json_object_get(topo, key));
            if (i == j)
                snprintf(cell, sizeof cell, "X");
            else if (level && strcmp(level, "nvlink") == 0)
                snprintf(cell, sizeof cell, "NV%lld",
                         (long long)json_integer_value(json_object_get(links, key)));
            else
                snprintf(cell, sizeof cell, "%s", short_name(level));
            printf(j + 1 < n ? " %-6s" : " %s", cell);
        }
        printf("\n");
    }
    printf("\nLegend:\n"
           "  X    = Self\n"
           "  SYS  = Connection traversing PCIe as well as the SMP interconnect between NUMA nodes\n"
           "  NODE = Connection traversing PCIe as well as the interconnect between PCIe host\n"
           "         bridges within a NUMA node\n"
           "  PHB  = Connection traversing PCIe as well as a PCIe host bridge (typically the CPU)\n"
           "  PXB  = Connection traversing multiple PCIe bridges (without the host bridge)\n"
           "  PIX  = Connection traversing at most a single PCIe bridge\n"
           "  NV#  = Connection traversing a bonded set of # NVLinks\n");
}

static void print_json(json_t *devices)
{
    json_t *topo = json_object(), *links = json_object();
    size_t i;
    json_t *dev;
    json_array_foreach(devices, i, dev) {
        char key[24];
        snprintf(key, sizeof key, "%zu", i);
        json_t *t = json_object_get(dev, "topology"), *l = json_object_get(dev, "nvlinks");
        json_object_set(topo, key, json_is_object(t) ? t : json_object());
        json_object_set(links, key, json_is_object(l) ? l : json_object());
    }
    json_t *out = json_pack("{s:o,s:o}", "topology", topo, "nvlinks", links);
    cli_print_json(out);
    json_decref(out);
}

int cmd_topo(int argc, char **argv)
{
    if (cli_wants_help(argc, argv))
        return usage(stdout, 0);
    bool as_json = false;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--json") == 0)
            as_json = true;
        else {
            fprintf(stderr, "convgpu topo: unknown argument '%s'\n", argv[i]);
            return usage(stderr, 2);
        }
    }
    json_t *devices = NULL;
    char terr[512] = "";
    long st = cli_request("GET", "/v1/devices", NULL, &devices, terr, sizeof terr);
    if (st != 200 || !json_is_array(devices)) {
        cli_report_error(st, devices, terr);
        json_decref(devices);
        return 1;
    }
    if (as_json)
        print_json(devices);
    else
        print_matrix(devices);
    json_decref(devices);
    return 0;
}
