/* config.c — reading the interposer's environment (see docs/INTERPOSER.md) exactly once. */
#include "config.h"
#include "client.h"
#include "fork.h"
#include "log.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

_Atomic int cg_state = CG_STATE_UNKNOWN;
struct cg_config cg_cfg;

static pthread_once_t once = PTHREAD_ONCE_INIT;

static bool truthy(const char *v)
{
    return v && *v && strcmp(v, "0") != 0;
}

static void load(void)
{
    cg_log_init(getenv("CONVGPU_LOG"));
    cg_cfg.daemon_timeout_s = 30.0;
    const char *t = getenv("CONVGPU_DAEMON_TIMEOUT");
    if (t && *t) {
        char *end;
        double v = strtod(t, &end);
        if (*end == '\0' && v >= 0 && v <= 1e7)
            cg_cfg.daemon_timeout_s = v;
        else
            cg_log(CG_LOG_WARN, "ignoring CONVGPU_DAEMON_TIMEOUT=%s (want seconds)", t);
    }

    int state = CG_STATE_PASS;
    const char *sock = getenv("CONVGPU_SOCKET");
    if (truthy(getenv("CONVGPU_DISABLE"))) {
        cg_log(CG_LOG_INFO, "CONVGPU_DISABLE set: passing everything through");
    } else if (sock && *sock) {
        if (strlen(sock) < sizeof cg_cfg.socket) {
            memcpy(cg_cfg.socket, sock, strlen(sock) + 1);
            state = CG_STATE_ON;
        } else {
            cg_log(CG_LOG_ERROR, "CONVGPU_SOCKET is too long for a UNIX socket; not enforcing");
        }
    } else if (access(CG_DEFAULT_SOCKET, F_OK) == 0) {
        memcpy(cg_cfg.socket, CG_DEFAULT_SOCKET, sizeof CG_DEFAULT_SOCKET);
        state = CG_STATE_ON;
    }
    if (state == CG_STATE_ON) {
        if (cg_client_setup() != 0 || cg_fork_setup() != 0) {
            cg_log(CG_LOG_ERROR, "cannot set up the daemon client; not enforcing");
            state = CG_STATE_PASS;
        } else {
            cg_log(CG_LOG_DEBUG, "enforcing through %s (daemon timeout %.1fs)", cg_cfg.socket,
                   cg_cfg.daemon_timeout_s);
        }
    }
    atomic_store_explicit(&cg_state, state, memory_order_release);
}

bool cg_config_load(void)
{
    pthread_once(&once, load);
    return atomic_load_explicit(&cg_state, memory_order_acquire) == CG_STATE_ON;
}
