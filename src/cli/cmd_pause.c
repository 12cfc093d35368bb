/* cmd_pause.c — convgpu pause, resume and move (docs/PAUSE.md): whole containers checkpointed
 * through the driver, their GPU memory and contexts released, brought back bit for bit, on the
 * same GPU or another of the same model. Each command asks the daemon (through the client
 * library), then follows the container until the step has ended (--no-wait: at once). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "size.h"

enum verb { V_PAUSE, V_RESUME, V_MOVE };

static const char *const usage[] = {
    [V_PAUSE] = "convgpu pause ID|NAME [--no-wait] [--timeout S]",
    [V_RESUME] = "convgpu resume ID|NAME [--no-wait] [--timeout S]",
    [V_MOVE] = "convgpu move ID|NAME --device N [--no-wait] [--timeout S]",
};

static const char *const help[] = {
    [V_PAUSE] =
        "Checkpoints every process of a container through the driver (docs/PAUSE.md): its\n"
        "launches and allocations wait at the interposer's gate, the driver locks each process,\n"
        "copies its GPU memory to host memory and releases its memory and context: the GPU shows\n"
        "it gone, and its memory goes to whoever waits. Its limit stays. Waits until it is\n"
        "paused. Where the driver has no checkpoint API the daemon refuses (exit 1), or swaps\n"
        "the container out when convgpud runs with --pause-fallback swap.\n",
    [V_RESUME] =
        "Brings a paused container back: its memory is reserved first, when that is safe (it\n"
        "may wait for memory like any request), then every process is restored at the same\n"
        "addresses, bit for bit, and unlocked. Waits until it runs.\n",
    [V_MOVE] =
        "Moves a container to GPU N of the same model: it is paused if it runs, all it had is\n"
        "reserved on GPU N (refused when that is not free, or the model differs), and its\n"
        "processes are restored there. Waits until it runs on N. Only root, the daemon's user\n"
        "and operators may move containers.\n",
};

static const char *str(json_t *o, const char *key)
{
    const char *s = json_string_value(json_object_get(o, key));
    return s ? s : "";
}

static void nap_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

/* 1 done, -1 failed (message printed), 0 not yet. */
static int ended(enum verb v, json_t *c, long device)
{
    const char *state = str(c, "state"), *error = str(c, "pause_error");
    long dev = (long)json_integer_value(json_object_get(c, "device"));
    if (v == V_PAUSE && strcmp(state, "pausing") != 0) {
        if (strcmp(state, "paused") == 0)
            return 1;
        fprintf(stderr, "convgpu pause: %s\n", error[0] ? error : "not paused");
        return -1;
    }
    if (v != V_PAUSE && strcmp(state, "running") == 0 && (v == V_RESUME || dev == device))
        return 1;
    if (v != V_PAUSE && error[0]) {
        fprintf(stderr, "convgpu %s: %s\n", v == V_MOVE ? "move" : "resume", error);
        return -1;
    }
    return 0;
}

static void report(enum verb v, json_t *c)
{
    char b[CG_SIZE_BUFLEN];
    if (v == V_PAUSE)
        printf("%s paused: %s off the device in %.3f s\n", str(c, "id"),
               cg_format_size((uint64_t)json_integer_value(json_object_get(c, "paused_bytes")),
                              b, sizeof b),
               json_real_value(json_object_get(c, "pause_s")));
    else
        printf("%s running on device %lld (restored in %.3f s)\n", str(c, "id"),
               (long long)json_integer_value(json_object_get(c, "device")),
               json_real_value(json_object_get(c, "resume_s")));
}

static int command(int argc, char **argv, enum verb v)
{
    if (cli_wants_help(argc, argv)) {
        printf("Usage: %s\n\n%s", usage[v], help[v]);
        return 0;
    }
    const char *id = NULL;
    bool wait = true;
    long device = -1;
    double timeout = 600;
    for (int i = 1; i < argc; i++) {
        char *end;
        if (strcmp(argv[i], "--no-wait") == 0) {
            wait = false;
        } else if (strcmp(argv[i], "--timeout") == 0 && i + 1 < argc) {
            timeout = strtod(argv[++i], &end);
            if (*end || !(timeout > 0 && timeout <= 86400)) {
                fprintf(stderr, "convgpu: --timeout takes seconds from 0 to 86400\n");
                return 2;
            }
        } else if (v == V_MOVE && strcmp(argv[i], "--device") == 0 && i + 1 < argc) {
            errno = 0;
            device = strtol(argv[++i], &end, 10);
            if (errno || *end || device < 0 || device >= 4096) {
                fprintf(stderr, "convgpu move: --device takes a device index\n");
                return 2;
            }
        } else if (argv[i][0] != '-' && !id) {
            id = argv[i];
        } else {
            fprintf(stderr, "convgpu: unexpected '%s'\nUsage: %s\n", argv[i], usage[v]);
            return 2;
        }
    }
    if (!id || (v == V_MOVE && device < 0)) {
        fprintf(stderr, "convgpu: %s\nUsage: %s\n", !id ? "container id missing" : "--device missing",
                usage[v]);
        return 2;
    }
    struct cgc_error err = {0};
    json_t *c = v == V_PAUSE    ? cgc_pause(id, &err)
                : v == V_RESUME ? cgc_resume(id, &err)
                                : cgc_move(id, (unsigned)device, &err);
    if (!c) {
        cli_report(&err);
        return err.status == 404 ? 3 : 1;
    }
    if (json_is_string(json_object_get(c, "fallback"))) {
        printf("%s swapped out instead (the driver has no checkpoint API)\n", str(c, "id"));
        json_decref(c);
        return 0;
    }
    char cid[80];
    snprintf(cid, sizeof cid, "%s", str(c, "id"));
    if (!wait) {
        printf("%s %s\n", cid, str(c, "state"));
        json_decref(c);
        return 0;
    }
    for (long waited = 0;; waited += 20) {
        int e = ended(v, c, device);
        if (e) {
            if (e > 0)
                report(v, c);
            json_decref(c);
            return e > 0 ? 0 : 1;
        }
        if (waited / 1000.0 >= timeout) {
            fprintf(stderr, "convgpu: %s is still %s after %.0f s\n", cid, str(c, "state"),
                    timeout);
            json_decref(c);
            return 1;
        }
        json_decref(c);
        nap_ms(20);
        if (!(c = cgc_inspect(cid, &err))) {
            cli_report(&err);
            return 1;
        }
    }
}

int cmd_pause(int argc, char **argv) { return command(argc, argv, V_PAUSE); }
int cmd_resume(int argc, char **argv) { return command(argc, argv, V_RESUME); }
int cmd_move(int argc, char **argv) { return command(argc, argv, V_MOVE); }
