/* cli.h — the convgpu command table: each subcommand is one function in its own file. */
#ifndef CONVGPU_CLI_H
#define CONVGPU_CLI_H

#include <jansson.h>
#include <signal.h>
#include <stdbool.h>
#include <sys/types.h>

#include "container_options.h"
#include "convgpu_client.h"

/* Each returns the process exit status; argv[0] is the subcommand's name. */
int cmd_run(int argc, char **argv);
int cmd_devices(int argc, char **argv);
int cmd_ps(int argc, char **argv);
int cmd_inspect(int argc, char **argv);
int cmd_create(int argc, char **argv);
int cmd_rm(int argc, char **argv);
int cmd_swap(int argc, char **argv);
int cmd_unswap(int argc, char **argv);
int cmd_pause(int argc, char **argv);  /* cmd_pause.c: pause, resume, move */
int cmd_resume(int argc, char **argv);
int cmd_move(int argc, char **argv);
int cmd_set(int argc, char **argv);
int cmd_policy(int argc, char **argv);
int cmd_tenant(int argc, char **argv);
/* The tenants table of GET /v1/tenants (cmd_tenant.c; top shows it too). */
void cli_print_tenants(json_t *ans);
/* A JSON answer as `--json` prints it (indented by 2). */
void cli_print_json(json_t *j);
int cmd_events(int argc, char **argv);
int cg_sim_main(int argc, char **argv);

/* Forks and execs cmd with the container env (from the create answer); output, when not NULL,
 * is a file that gets the child's stdout and stderr. Returns the pid, or -1. */
pid_t cli_spawn_in_container(json_t *env, char **cmd, const char *output);
/* The same, with the child's signal mask (a mask survives fork and exec: a caller that blocks
 * signals to take them with sigwaitinfo gives its own old mask here) and, with own_group, a
 * process group of its own (so that the whole of a shell command line can be signalled). */
struct cli_spawn_opts {
    const sigset_t *mask;
    bool own_group;
};
pid_t cli_spawn(json_t *env, char **cmd, const char *output, const struct cli_spawn_opts *o);
int cmd_interfere(int argc, char **argv);
int cmd_demo(int argc, char **argv);
int cmd_top(int argc, char **argv);
/* The tables of `devices` and `ps`, from the API's answers (also used by `top`). */
void cli_print_devices(json_t *devices);
void cli_print_containers(json_t *containers);
/* An event's amount as shown in a table: its bytes, or for a "compute" event the share ("30%
 * hard", "-" when removed). buf holds CG_SIZE_BUFLEN (size.h) characters. */
const char *cli_event_amount(json_t *event, char *buf);
int cmd_docker(int argc, char **argv);
int cmd_setup(int argc, char **argv);
int cmd_slurm(int argc, char **argv);
int cmd_k8s(int argc, char **argv);
int cmd_cdi(int argc, char **argv);
/* The CDI spec `convgpu cdi generate` writes for the daemon's GET /v1/version and /v1/devices
 * answers, its hooks running shim with --runtime-dir rundir (cmd_cdi.c); doctor compares the
 * installed spec with it. NULL with the reason in err. */
json_t *cli_cdi_spec(json_t *version, json_t *devices, const char *shim, const char *rundir,
                     char *err, size_t errlen);
int cmd_profile(int argc, char **argv);
int cmd_topo(int argc, char **argv);
int cmd_doctor(int argc, char **argv);

/* Reads a compute share into spec (compute_pct, compute_mode): --gpu-compute PCT (1-100; with
 * allow_none, "none", which sets *none: the share removed) and --compute-mode hard|elastic (NULL
 * when not given; only with a share unless mode_alone). Returns 0, or 2 with the reason printed
 * for `cmd`. */
int cli_parse_compute(const char *cmd, const char *pct, const char *mode, bool allow_none,
                      bool mode_alone, struct cg_client_spec *spec, bool *none);
/* Reads --priority (0-9, digits only) into spec; 0, or 2 after a message naming `cmd`. */
int cli_parse_priority(const char *cmd, const char *priority, struct cg_client_spec *spec);
/* A refusal as "convgpu: TEXT (HTTP N)" on stderr (the transport's reason alone when the
 * daemon was not reached). */
void cli_report(const struct cgc_error *e);
/* A container's GPUs as "0,1" (its "devices"; "device" from an older daemon) into out;
 * returns how many. */
size_t cli_format_devices(json_t *container, char *out, size_t len);
/* The daemon's refusal of a create without a limit, said in the command's flags; false when
 * the answer is another refusal (the caller reports it as it is). */
bool cli_report_missing_limit(const char *cmd, const struct cgc_error *e);
/* "0,2,3": distinct GPU indexes below CG_MAX_DEVICES into out (at most max); returns how many,
 * 0 when malformed. */
size_t cli_parse_index_list(const char *text, unsigned *out, size_t max);

/* One argument of a command that makes or changes a container, from the option table
 * (container_options.h): argv[*i] is "--FLAG", "--FLAG VALUE" or "--FLAG=VALUE" of a row the
 * door (CGC_DOOR_RUN, _CREATE, _SET) accepts. Returns 1 when taken (*i moves past its value),
 * 0 when argv[*i] is no such option, 2 after printing the reason for `cmd`. */
int cli_take_option(const char *cmd, unsigned door, int argc, char **argv, int *i,
                    struct cgc_option_values *v);
/* The rules between the options taken (cgc_options_check): 0, or 2 after printing them. */
int cli_check_options(const char *cmd, const struct cgc_option_values *v);

/* True when argv holds -h or --help before any "--". */
bool cli_wants_help(int argc, char **argv);

#endif
