/* config.h — whether this process is under convgpu, decided once from the environment.
 *
 * Unconfigured processes (no CONVGPU_SOCKET and no /run/convgpu/container.sock, or
 * CONVGPU_DISABLE=1) pass every hook straight through: cg_enabled() is then one acquire load and
 * one well-predicted branch. */
#ifndef CONVGPU_IP_CONFIG_H
#define CONVGPU_IP_CONFIG_H

#include <stdatomic.h>
#include <stdbool.h>
#include <sys/un.h>

#define CG_DEFAULT_SOCKET "/run/convgpu/container.sock"

enum cg_state { CG_STATE_UNKNOWN = 0, CG_STATE_PASS = 1, CG_STATE_ON = 2 };

struct cg_config {
    char socket[sizeof(((struct sockaddr_un *)0)->sun_path)];
    double daemon_timeout_s; /* how long a request waits for an unreachable daemon */
};

extern _Atomic int cg_state;
extern struct cg_config cg_cfg; /* valid once cg_state != CG_STATE_UNKNOWN */

bool cg_config_load(void);

static inline bool cg_enabled(void)
{
    int s = atomic_load_explicit(&cg_state, memory_order_acquire);
    if (__builtin_expect(s == CG_STATE_PASS, 1))
        return false;
    if (s == CG_STATE_ON)
        return true;
    return cg_config_load();
}

#endif
