/* spank_convgpu.c — the SPANK plugin: `--gpu-mem=SIZE`, `--gpu-compute=PCT` and `--gpu-count=N`
 * on srun, sbatch and salloc make each step of the job a convgpud container on every node it runs
 * on (on N GPUs there, each with SIZE, when --gpu-count asks for more than one).
 *
 * Follow one `srun --gpu-mem=1GiB prog`:
 *   srun (local context)      the option callback checks the value (request.c): a bad one ends
 *                             srun with the message, before anything is queued; so does sbatch
 *                             or salloc (allocator context).
 *   slurmstepd (remote)       Slurm hands the option to the step on each node; it is checked
 *                             again (a node trusts no client), then step_register(): container
 *                             "slurm-JOB.STEP" with the limit, owned by the job's uid/gid, with
 *                             auto_remove (the daemon watches slurmstepd itself); the daemon's
 *                             "env" (LD_PRELOAD of the interposer, CONVGPU_SOCKET of this step's
 *                             socket, CUDA_VISIBLE_DEVICES, ...) goes into the job environment
 *                             every task starts with.
 *   step ends                 slurm_spank_exit releases the container; if slurmstepd never gets
 *                             there (kill -9, a crash), its exit is the container's stop for
 *                             convgpud, which watches that pid.
 *
 * Invariants: a step that asks for nothing is not touched (no request to the daemon, no
 * variable); a step whose registration failed runs none of its tasks (each prints the
 * daemon's reason and exits 1), so no task runs unfenced on a limit it asked for; a container
 * outlives its step by at most the life of the step's slurmstepd.
 *
 * Each step is its own container with the whole --gpu-mem (docs/SLURM.md says why), except on
 * a batch job's batch node: there the job's other steps run in the batch step's container
 * (batch_env.h), so `sbatch --gpu-mem=X` with `srun` inside holds X there, as slurmctld counted. */
#include <slurm/slurm.h> /* SLURM_EXTERN_CONT */
#include <slurm/spank.h>

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "batch_env.h"
#include "container_options.h"
#include "convgpu_client.h"
#include "request.h"
#include "step.h"
#include "task_mounts.h"

SPANK_PLUGIN(convgpu, 1);

static struct slurm_gpu_request request;
static char container_id[64]; /* set once this step is registered, remote context only */
static uint32_t saved_batch_job; /* the job whose batch environment this step saved, or 0 */
/* Set when each task gets its own /etc/ld.so.preload and /run/convgpu (task_mounts.h). */
static int task_fence;
static char task_preload[4096], task_container_dir[4096];
/* Why this step could not be registered. A failed init_post_opt makes srun print only "launch
 * failed: Plugin initialization failed" (and exit 0 on Slurm 22.05), so the refusal is kept
 * and each task prints it to the job's own stderr and ends with status 1 before the user's
 * program would run. */
static char refusal[768];

static int opt_cb(int val, const char *value, int remote);

/* The options are the rows of the container-option table (container_options.h) that have a
 * SPANK name, registered in table order with the row's id as their value; the table's help is
 * their help. --gpu-mem, --gpu-compute and --gpu-count keep Slurm's own messages (request.c);
 * the others are parsed by the table's parser. */
static struct spank_option options[CGC_OPT_COUNT + 1];

static void options_from_table(void)
{
    size_t n = 0;
    for (size_t i = 0; i < CGC_OPT_COUNT; i++) {
        const struct cgc_option *o = &cgc_options[i];
        if (!(o->doors & CGC_DOOR_SPANK) || !o->spank)
            continue;
        options[n++] = (struct spank_option){
            .name = (char *)o->spank, .arginfo = (char *)o->arg, .usage = (char *)o->help,
            .has_arg = o->type != CGC_TYPE_FLAG, .val = (int)o->id, .cb = opt_cb};
    }
    options[n] = (struct spank_option)SPANK_OPTIONS_TABLE_END;
}

static int opt_cb(int val, const char *value, int remote)
{
    char err[256];
    int rc;
    switch (val) {
    case CGC_OPT_GPU_MEMORY:
        rc = slurm_parse_gpu_mem(value, &request.bytes, err, sizeof err);
        break;
    case CGC_OPT_GPU_COMPUTE:
        rc = slurm_parse_gpu_compute(value, &request.compute_pct, err, sizeof err);
        break;
    case CGC_OPT_GPUS: rc = slurm_parse_gpu_count(value, &request.gpus, err, sizeof err); break;
    default: {
        const struct cgc_option *o = val >= 0 && val < CGC_OPT_COUNT ? &cgc_options[val] : NULL;
        struct cgc_option_values v = {0};
        char where[64];
        snprintf(where, sizeof where, "--%s", o ? o->spank : "?");
        rc = o ? cgc_option_apply(o, where, value, &v, err, sizeof err) : -1;
        /* Slurm's value string does not outlive the callback: keep a constant. */
        if (rc == 0 && val == CGC_OPT_COMPUTE_MODE)
            request.compute_mode = strcmp(value, "hard") == 0 ? "hard" : "elastic";
        if (rc == 0 && val == CGC_OPT_PRIORITY) {
            request.has_priority = true;
            request.priority = v.spec.priority;
        }
        if (rc == 0 && val == CGC_OPT_NO_SWAP)
            request.no_swap = v.spec.no_swap;
        if (rc == 0 && val == CGC_OPT_EXCLUSIVE)
            request.exclusive = v.spec.exclusive;
        break;
    }
    }
    if (rc != 0)
        slurm_error("convgpu: %s%s", err, remote ? " (refused on the node)" : "");
    return rc;
}

/* Plugin arguments from plugstack.conf: runtime_dir=DIR (convgpud's --runtime-dir on the node,
 * default /run/convgpu). */
static int parse_args(int ac, char **av)
{
    for (int i = 0; i < ac; i++) {
        if (strncmp(av[i], "runtime_dir=", 12) == 0) {
            const char *dir = av[i] + 12;
            if (dir[0] != '/' || strlen(dir) > 80) {
                slurm_error("convgpu: plugstack.conf: runtime_dir=%s must be an absolute path "
                            "of at most 80 characters (the daemon's sockets live below it)",
                            dir);
                return -1;
            }
            cli_set_runtime_dir(dir);
        } else {
            slurm_error("convgpu: plugstack.conf: unknown argument '%s' (known: runtime_dir=DIR)",
                        av[i]);
            return -1;
        }
    }
    return 0;
}

int slurm_spank_init(spank_t sp, int ac, char **av)
{
    spank_context_t ctx = spank_context();
    if (ctx != S_CTX_LOCAL && ctx != S_CTX_ALLOCATOR && ctx != S_CTX_REMOTE)
        return 0;
    if (parse_args(ac, av) != 0)
        return -1;
    options_from_table();
    for (struct spank_option *o = options; o->name; o++)
        if (spank_option_register(sp, o) != ESPANK_SUCCESS) {
            slurm_error("convgpu: cannot register option --%s", o->name);
            return -1;
        }
    return 0;
}

/* A step's tasks' environment, through SPANK: a job's list longer than the buffer cannot be
 * extended (dropping it would break the job). */
struct task_env {
    spank_t sp;
    char old[4096];
};

static int task_env_get(void *ctx, const char *name, const char **value)
{
    struct task_env *t = ctx;
    spank_err_t ge = spank_getenv(t->sp, name, t->old, sizeof t->old);
    *value = ge == ESPANK_SUCCESS ? t->old : NULL;
    return ge == ESPANK_SUCCESS || ge == ESPANK_ENV_NOEXIST ? 0 : -1;
}

static int task_env_set(void *ctx, const char *name, const char *value)
{
    struct task_env *t = ctx;
    return spank_setenv(t->sp, name, value, 1) == ESPANK_SUCCESS ? 0 : -1;
}

/* LD_PRELOAD and LD_LIBRARY_PATH go before what the job has (its own preloads still load);
 * every other variable of the daemon's answer replaces the job's (cgc_env_apply). */
static int set_task_env(spank_t sp, json_t *env)
{
    static const struct cgc_env_ops ops = {task_env_get, task_env_set};
    struct task_env t = {.sp = sp};
    const char *k = "?";
    switch (cgc_env_apply(env, &ops, &t, &k)) {
    case CGC_ENV_OK: return 0;
    case CGC_ENV_UNREADABLE: slurm_error("convgpu: the job's %s is too long to extend", k); break;
    case CGC_ENV_NOMEM: slurm_error("convgpu: out of memory extending %s", k); break;
    default: slurm_error("convgpu: cannot set %s for the step's tasks", k); break;
    }
    return -1;
}

/* The tasks' mount namespace, prepared in slurmstepd once the step has its container's
 * environment: the container's directory is where the daemon put its socket, which must be
 * below the daemon's containers/ (the environment may come from a file, batch_env.h). */
static void prepare_task_fence(json_t *env)
{
    const char *sock = json_string_value(json_object_get(env, "CONVGPU_SOCKET"));
    const char *lib = json_string_value(json_object_get(env, "LD_PRELOAD"));
    char prefix[4096], err[512];
    int plen = snprintf(prefix, sizeof prefix, "%s/containers/", cli_runtime_dir());
    const char *slash = sock ? strrchr(sock, '/') : NULL;
    if (!sock || !lib || !slash || strncmp(sock, prefix, (size_t)plen) != 0 ||
        strstr(sock, "/../") || strchr(lib, ':') || strchr(lib, '\n')) {
        slurm_info("convgpu: the container's environment has no usable CONVGPU_SOCKET or "
                   "LD_PRELOAD: tasks are fenced through their environment only");
        return;
    }
    if (!task_mounts_possible(err, sizeof err)) {
        slurm_info("convgpu: %s: tasks are fenced through their environment only", err);
        return;
    }
    if (task_preload_write(cli_runtime_dir(), lib, task_preload, sizeof task_preload, err,
                           sizeof err) != 0) {
        slurm_info("convgpu: %s: tasks are fenced through their environment only", err);
        return;
    }
    snprintf(task_container_dir, sizeof task_container_dir, "%.*s", (int)(slash - sock), sock);
    task_fence = 1;
}

/* Milliseconds since t0: the plugin's own cost per step, in slurmd's log
 * (tests/slurm/bench_srun.sh reads it). */
static double ms_since(const struct timespec *t0)
{
    struct timespec t1;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    return (double)(t1.tv_sec - t0->tv_sec) * 1e3 + (double)(t1.tv_nsec - t0->tv_nsec) / 1e6;
}

static int register_step(spank_t sp)
{
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    uint32_t job = 0, step = 0;
    uid_t uid = 0;
    gid_t gid = 0;
    if (spank_get_item(sp, S_JOB_ID, &job) != ESPANK_SUCCESS ||
        spank_get_item(sp, S_JOB_STEPID, &step) != ESPANK_SUCCESS ||
        spank_get_item(sp, S_JOB_UID, &uid) != ESPANK_SUCCESS ||
        spank_get_item(sp, S_JOB_GID, &gid) != ESPANK_SUCCESS) {
        slurm_error("convgpu: cannot read the step's job id, step id, uid or gid");
        return -1;
    }
    /* The extern step holds no task of the user's program (only processes adopted by
     * pam_slurm_adopt), and a limit there would be counted once more on every node. */
    if (step == SLURM_EXTERN_CONT)
        return 0;
    char id[sizeof container_id], err[768];
    if (step != SLURM_BATCH_SCRIPT) {
        slurm_step_container_id(job, SLURM_BATCH_SCRIPT, id, sizeof id);
        json_t *env = batch_env_load(cli_runtime_dir(), job);
        if (env && step_exists(id)) {
            slurm_info("convgpu: step %u.%u runs in %s (the batch step's limit)", job, step, id);
            int rc = set_task_env(sp, env);
            if (rc == 0)
                prepare_task_fence(env);
            json_decref(env);
            return rc;
        }
        json_decref(env);
    }
    slurm_step_container_id(job, step, id, sizeof id);
    json_t *env = step_register(id, &request, uid, gid, err, sizeof err);
    if (!env) {
        slurm_error("convgpu: %s", err);
        snprintf(refusal, sizeof refusal, "%s", err);
        return 0;
    }
    snprintf(container_id, sizeof container_id, "%s", id);
    if (step == SLURM_BATCH_SCRIPT) {
        if (batch_env_save(cli_runtime_dir(), job, env, err, sizeof err) == 0)
            saved_batch_job = job;
        else /* the job's steps then register their own limits, as on other nodes */
            slurm_info("convgpu: %s", err);
    }
    int rc = set_task_env(sp, env);
    if (rc == 0)
        prepare_task_fence(env);
    json_decref(env);
    slurm_info("convgpu: %s registered in %.3f ms", id, ms_since(&t0));
    return rc;
}

int slurm_spank_init_post_opt(spank_t sp, int ac, char **av)
{
    (void)ac;
    (void)av;
    spank_context_t ctx = spank_context();
    if (ctx != S_CTX_LOCAL && ctx != S_CTX_ALLOCATOR && ctx != S_CTX_REMOTE)
        return 0;
    char err[256];
    if (slurm_check_request(&request, err, sizeof err) != 0) {
        slurm_error("convgpu: %s", err);
        return -1;
    }
    if (ctx != S_CTX_REMOTE || request.bytes == 0)
        return 0;
    return register_step(sp);
}

/* In each task, root, before it drops privileges: its own mount namespace, and the socket it
 * finds there. A task that cannot have them does not run (it asked to be fenced). */
int slurm_spank_task_init_privileged(spank_t sp, int ac, char **av)
{
    (void)ac;
    (void)av;
    if (!task_fence || refusal[0])
        return 0;
    char err[512];
    if (task_enter_mounts(task_preload, task_container_dir, err, sizeof err) != 0) {
        fprintf(stderr, "convgpu: %s; the step does not run\n", err);
        return -1;
    }
    if (spank_setenv(sp, "CONVGPU_SOCKET", TASK_SOCKET, 1) != ESPANK_SUCCESS) {
        fprintf(stderr, "convgpu: cannot set CONVGPU_SOCKET; the step does not run\n");
        return -1;
    }
    return 0;
}

/* In each task, after fork and before exec of the user's program. */
int slurm_spank_task_init(spank_t sp, int ac, char **av)
{
    (void)sp;
    (void)ac;
    (void)av;
    if (!refusal[0])
        return 0;
    fprintf(stderr, "convgpu: %s; the step does not run\n", refusal);
    return -1;
}

int slurm_spank_exit(spank_t sp, int ac, char **av)
{
    (void)sp;
    (void)ac;
    (void)av;
    if (spank_context() != S_CTX_REMOTE || !container_id[0])
        return 0;
    char err[768];
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    if (saved_batch_job) {
        batch_env_remove(cli_runtime_dir(), saved_batch_job);
        saved_batch_job = 0;
    }
    if (step_release(container_id, err, sizeof err) != 0) {
        /* Not fatal: slurmstepd's exit, which follows, removes the container anyway. */
        slurm_info("convgpu: %s (convgpud removes it when slurmstepd exits)", err);
    } else {
        slurm_info("convgpu: %s released in %.3f ms", container_id, ms_since(&t0));
    }
    container_id[0] = '\0';
    return 0;
}
