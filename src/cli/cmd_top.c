/* cmd_top.c — `convgpu top`: a live view of the node, redrawn every interval: devices,
 * containers (who runs, who is suspended and for how long) and the latest decisions. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "http.h"
#include "size.h"

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
    (void)sig;
    stop = 1;
}

/* Who waits, and why (the API's wait_reason, oversub.h): a wait the GPU's sharing factor
 * promised says so, with the GPU's promise against its memory. Nothing when nobody waits. */
static void print_waiting(json_t *devs, json_t *ctrs)
{
    size_t i, shown = 0;
    json_t *c;
    json_array_foreach(ctrs, i, c) {
        const char *why = json_string_value(json_object_get(c, "wait_reason"));
        if (!why)
            continue;
        if (shown++ == 0)
            printf("\nwaiting:\n");
        json_int_t dev = json_integer_value(json_object_get(c, "device"));
        printf("  %-16.16s GPU %lld  %s", json_string_value(json_object_get(c, "name")),
               (long long)dev, strcmp(why, "oversubscribed") == 0 ? "waiting (oversubscribed)"
                                                                   : "waiting (memory)");
        size_t k;
        json_t *d;
        json_array_foreach(devs, k, d) {
            if (json_integer_value(json_object_get(d, "index")) != dev ||
                strcmp(why, "oversubscribed") != 0)
                continue;
            char l[CG_SIZE_BUFLEN], cap[CG_SIZE_BUFLEN];
            printf(": limits %s on %s (factor %.2f)",
                   cg_format_size((uint64_t)json_integer_value(json_object_get(d, "limits")), l,
                                  sizeof l),
                   cg_format_size((uint64_t)json_integer_value(json_object_get(d, "capacity")),
                                  cap, sizeof cap),
                   json_number_value(json_object_get(d, "oversubscribe")));
        }
        printf("\n");
    }
}

static int frame(bool clear, unsigned nevents)
{
    json_t *devs = NULL, *ctrs = NULL, *evs = NULL;
    char err[512];
    long st = cli_request("GET", "/v1/devices", NULL, &devs, err, sizeof err);
    if (st != 200) {
        cli_report_error(st, devs, err);
        json_decref(devs);
        return 1;
    }
    st = cli_request("GET", "/v1/containers", NULL, &ctrs, err, sizeof err);
    if (st == 200)
        st = cli_request("GET", "/v1/events", NULL, &evs, err, sizeof err);
    if (st != 200) {
        cli_report_error(st, ctrs, err);
        json_decref(devs);
        json_decref(ctrs);
        json_decref(evs);
        return 1;
    }
    if (clear)
        fputs("\033[H\033[2J", stdout);
    time_t now = time(NULL);
    char when[32];
    strftime(when, sizeof when, "%H:%M:%S", localtime(&now));
    printf("convgpu top — %s — %s (Ctrl-C quits)\n\n", when, cli_runtime_dir());
    cli_print_devices(devs);
    printf("\n");
    cli_print_containers(ctrs);
    print_waiting(devs, ctrs);
    json_t *tenants = NULL;
    if (cli_request("GET", "/v1/tenants", NULL, &tenants, err, sizeof err) == 200) {
        printf("\n");
        cli_print_tenants(tenants);
    }
    json_decref(tenants);
    json_t *list = json_object_get(evs, "events");
    size_t n = json_array_size(list);
    printf("\nlatest decisions:\n");
    for (size_t i = n > nevents ? n - nevents : 0; i < n; i++) {
        json_t *e = json_array_get(list, i);
        char b[CG_SIZE_BUFLEN];
        const char *reason = json_string_value(json_object_get(e, "reason"));
        printf("  %-8s %-14.14s %9s  %s\n", json_string_value(json_object_get(e, "type")),
               json_string_value(json_object_get(e, "container")), cli_event_amount(e, b),
               reason ? reason : "");
    }
    fflush(stdout);
    json_decref(devs);
    json_decref(ctrs);
    json_decref(evs);
    return 0;
}

int cmd_top(int argc, char **argv)
{
    static const char *use = "convgpu top [--interval SECONDS] [--once]";
    if (cli_wants_help(argc, argv)) {
        printf("Usage: %s\n\nA live view of the node, redrawn every interval (default 1 s): devices,\n"
               "containers (running or suspended, and for how long; compute share, utilisation\n"
               "and time throttled), who waits and why (oversubscribed: for memory the GPU's\n"
               "sharing factor promised) and the latest decisions.\n"
               "  --once      draw one frame without clearing the screen and exit\n", use);
        return 0;
    }
    double interval = 1.0;
    bool once = false;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--once") == 0) {
            once = true;
        } else if (strcmp(argv[i], "--interval") == 0 && i + 1 < argc) {
            char *end;
            errno = 0;
            interval = strtod(argv[++i], &end);
            if (errno || *end || !(interval >= 0.1 && interval <= 3600)) {
                fprintf(stderr, "convgpu top: --interval takes seconds between 0.1 and 3600\n");
                return 2;
            }
        } else {
            fprintf(stderr, "convgpu top: unexpected '%s'\nUsage: %s\n", argv[i], use);
            return 2;
        }
    }
    if (once)
        return frame(false, 8);
    struct sigaction sa = {.sa_handler = on_signal};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    bool tty = isatty(STDOUT_FILENO);
    while (!stop) {
        if (frame(tty, 8) != 0)
            return 1;
        struct timespec ts = {(time_t)interval, (long)((interval - (double)(time_t)interval) * 1e9)};
        while (!stop && nanosleep(&ts, &ts) != 0 && errno == EINTR)
            ;
    }
    return 0;
}
