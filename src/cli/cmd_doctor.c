/* cmd_doctor.c — `convgpu doctor [--json] [--deep] [--root DIR]`: runs every row of
 * doctor_checks[] (doctor_checks.c) and prints one line per check: its status, what was found
 * and, when something is wrong, the command that fixes it. Exits 1 when any check is broken,
 * 0 otherwise (warnings included). --root (or $CONVGPU_DOCTOR_ROOT) reads the host's files
 * under another directory: the tests plant broken configurations there. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "doctor.h"

static const char *status_name(enum doctor_status s)
{
    return s == DOCTOR_OK       ? "ok"
           : s == DOCTOR_ABSENT ? "absent"
           : s == DOCTOR_WARN   ? "warn"
                                : "broken";
}

int cmd_doctor(int argc, char **argv)
{
    static const char *use = "convgpu doctor [--json] [--deep] [--root DIR]";
    if (cli_wants_help(argc, argv)) {
        printf("Usage: %s\n\nChecks this node's convgpu pieces together and says, for each\n"
               "finding, what is wrong and the command that fixes it: the NVIDIA driver and\n"
               "NVML, the daemon and its version, the context charge, the runtime directory,\n"
               "the daemon's descriptor limit, Docker's runtime, containerd's entry, kubelet's\n"
               "device plugin, Slurm's plugstack, job_submit.lua and gres.conf, the CDI spec\n"
               "against what `convgpu cdi generate` would write now.\n"
               "A piece that is not on this node is reported absent. Exits 1 when something\n"
               "is broken.\n\n"
               "  --json      one JSON object: {\"broken\": N, \"checks\": [...]}\n"
               "  --deep      also run a tiny container of $CONVGPU_DOCTOR_IMAGE (default\n"
               "              busybox) through Docker and the convgpu runtime, 64MiB limit\n"
               "  --root DIR  read the host's files under DIR (default /, or\n"
               "              $CONVGPU_DOCTOR_ROOT)\n", use);
        return 0;
    }
    struct doctor_ctx ctx = {.root = getenv("CONVGPU_DOCTOR_ROOT")};
    bool json = false;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--json") == 0)
            json = true;
        else if (strcmp(argv[i], "--deep") == 0)
            ctx.deep = true;
        else if (strcmp(argv[i], "--root") == 0 && i + 1 < argc)
            ctx.root = argv[++i];
        else {
            fprintf(stderr, "convgpu doctor: unexpected '%s'\nUsage: %s\n", argv[i], use);
            return 2;
        }
    }
    if (!ctx.root || strcmp(ctx.root, "/") == 0)
        ctx.root = "";
    char terr[512];
    json_t *ans = NULL;
    long st = cli_request("GET", "/v1/version", NULL, &ans, terr, sizeof terr);
    if (st == 200) {
        ctx.version = ans;
        ans = NULL;
        if (cli_request("GET", "/v1/devices", NULL, &ans, terr, sizeof terr) == 200)
            ctx.devices = ans;
        else
            json_decref(ans);
    } else {
        snprintf(ctx.daemon_error, sizeof ctx.daemon_error, "%s",
                 st ? "the daemon answered GET /v1/version with an error" : terr);
        json_decref(ans);
    }
    json_t *out = json_array();
    int broken = 0;
    for (size_t i = 0; i < doctor_ncheck; i++) {
        struct doctor_finding f = {0};
        doctor_checks[i].run(&ctx, &f);
        broken += f.status == DOCTOR_BROKEN;
        if (json)
            json_array_append_new(out, json_pack("{s:s,s:s,s:s,s:s}", "check",
                                                 doctor_checks[i].name, "status",
                                                 status_name(f.status), "what", f.what, "fix",
                                                 f.fix));
        else {
            printf("%-7s %-11s %s\n", status_name(f.status), doctor_checks[i].name, f.what);
            if (f.fix[0])
                printf("%-7s %-11s fix: %s\n", "", "", f.fix);
        }
    }
    if (json) {
        json_t *doc = json_pack("{s:i,s:o}", "broken", broken, "checks", out);
        cli_print_json(doc);
        json_decref(doc);
    } else {
        json_decref(out);
        printf("%d broken\n", broken);
    }
    json_decref(ctx.version);
    json_decref(ctx.devices);
    return broken ? 1 : 0;
}
