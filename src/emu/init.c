/* init.c — cuInit, the driver version, and what happens to the process-local state on fork
 * and exit. A forked child is its own process: no worker thread survives fork, so its queues
 * start empty, and on its first call it drops what it inherited (without touching the parent's
 * charges) and registers in the shared state under its own pid. At exit the workers are
 * detached threads that die with the process; the devices it holds are handed on at once. */
#include "workq.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

emu_proc g_emu = {
    .lock = PTHREAD_RWLOCK_INITIALIZER,
    .init_lock = PTHREAD_MUTEX_INITIALIZER,
    .objs = {&g_emu.objs, &g_emu.objs, 0, NULL},
};

static void fork_prepare(void)
{
    pthread_mutex_lock(&g_emu.init_lock);
    emu_wrlock();
    emu_sched_lock(); /* the child gets the queues between two updates, never inside one */
}

static void fork_parent(void)
{
    emu_sched_unlock();
    emu_unlock();
    pthread_mutex_unlock(&g_emu.init_lock);
}

static void fork_child(void)
{
    /* The child's thread has a new tid, so it cannot unlock what the parent's thread locked:
     * start both locks afresh (nobody else runs in the child yet). */
    pthread_rwlock_init(&g_emu.lock, NULL);
    pthread_mutex_init(&g_emu.init_lock, NULL);
    emu_sched_after_fork();
    emu_ctx_tls_reset();
    emu_shared_forked(&g_emu.sh);
    emu_ckpt_forked();
    if (__atomic_load_n(&g_emu.initialized, __ATOMIC_ACQUIRE))
        __atomic_store_n(&g_emu.forked, 1, __ATOMIC_RELEASE);
}

__attribute__((constructor)) static void emu_driver_load(void)
{
    pthread_atfork(fork_prepare, fork_parent, fork_child);
}

__attribute__((destructor)) static void emu_driver_exit(void)
{
    if (__atomic_load_n(&g_emu.initialized, __ATOMIC_ACQUIRE) && g_emu.init_rc == CUDA_SUCCESS &&
        !__atomic_load_n(&g_emu.forked, __ATOMIC_ACQUIRE))
        emu_shared_exit(&g_emu.sh);
}

static void finish_fork(void)
{
    emu_release_owned(NULL, 1, 0);
    for (size_t i = 0; i < g_emu.nctx; i++) {
        __atomic_store_n(&g_emu.ctxs[i]->alive, 0, __ATOMIC_RELEASE);
        g_emu.ctxs[i]->gen++;
    }
    for (unsigned i = 0; i < EMU_MAX_DEVICES; i++) {
        __atomic_store_n(&g_emu.primary[i].alive, 0, __ATOMIC_RELEASE);
        g_emu.primary[i].gen++;
        g_emu.primary[i].refs = 0;
        g_emu.ctx_live[i] = 0;
    }
    if (g_emu.init_rc == CUDA_SUCCESS && emu_shared_reregister(&g_emu.sh) != 0) {
        fprintf(stderr, "convgpu-emu: forked child %d found no free slot in %s\n",
                (int)getpid(), g_emu.cfg.state_path);
        g_emu.init_rc = CUDA_ERROR_OPERATING_SYSTEM;
    }
    if (g_emu.init_rc == CUDA_SUCCESS)
        emu_ckpt_start();
}

CUresult emu_enter(void)
{
    if (!__atomic_load_n(&g_emu.initialized, __ATOMIC_ACQUIRE))
        return CUDA_ERROR_NOT_INITIALIZED;
    if (__atomic_load_n(&g_emu.forked, __ATOMIC_ACQUIRE)) {
        emu_wrlock();
        if (g_emu.forked) {
            finish_fork();
            __atomic_store_n(&g_emu.forked, 0, __ATOMIC_RELEASE);
        }
        emu_unlock();
    }
    /* A process another one has locked (checkpoint.c) takes no new call until unlocked. */
    if (__atomic_load_n(&g_emu_ckpt_locked, __ATOMIC_ACQUIRE))
        emu_ckpt_gate();
    return g_emu.init_rc;
}

static CUresult do_init(void)
{
    char err[EMU_ERR_MAX] = "";
    emu_config want;
    if (emu_config_from_env(&want, err, sizeof err) != 0) {
        fprintf(stderr, "convgpu-emu: cuInit: %s\n", err);
        return CUDA_ERROR_INVALID_VALUE;
    }
    if (emu_shared_attach(&g_emu.sh, &want, &g_emu.cfg, 1, err, sizeof err) != 0) {
        fprintf(stderr, "convgpu-emu: cuInit: %s\n", err);
        return CUDA_ERROR_OPERATING_SYSTEM;
    }
    for (unsigned i = 0; i < g_emu.cfg.ndev; i++)
        emu_device_uuid(i, g_emu.cfg.total[i], g_emu.uuid[i]);
    g_emu.nvis = emu_visible_devices(getenv("CUDA_VISIBLE_DEVICES"), g_emu.cfg.ndev,
                                     (const unsigned char(*)[16])g_emu.uuid, g_emu.vis);
    if (g_emu.nvis == 0) {
        emu_shared_detach(&g_emu.sh);
        return CUDA_ERROR_NO_DEVICE;
    }
    for (unsigned i = 0; i < g_emu.nvis; i++) {
        g_emu.primary[i].primary = 1;
        g_emu.primary[i].ordinal = i;
        g_emu.primary[i].phys = g_emu.vis[i];
    }
    return CUDA_SUCCESS;
}

CUresult cuInit(unsigned int Flags)
{
    if (Flags != 0)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&g_emu.init_lock);
    if (!g_emu.initialized) {
        /* Like the real driver, the first outcome (success or failure) is final. */
        g_emu.init_rc = do_init();
        __atomic_store_n(&g_emu.initialized, 1, __ATOMIC_RELEASE);
        if (g_emu.init_rc == CUDA_SUCCESS)
            emu_ckpt_start();
    }
    pthread_mutex_unlock(&g_emu.init_lock);
    return emu_enter();
}

CUresult cuDriverGetVersion(int *driverVersion)
{
    if (!driverVersion)
        return CUDA_ERROR_INVALID_VALUE;
    *driverVersion = CONVGPU_CUDA_API_VERSION;
    return CUDA_SUCCESS;
}
