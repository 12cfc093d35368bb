/* daemon_hint.c — cgc_daemon_start_hint(): the start command that fits this host (see
 * daemon_hint.h for the rule). The unit's and the driver's places are the ones Debian's
 * packages and NVIDIA's installers use; a host is "without a GPU" only when none of the
 * driver's traces is there, so a GPU host with an unusual layout still gets the real daemon. */
#include "daemon_hint.h"

#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static const char *const unit_paths[] = {
    "/etc/systemd/system/convgpud.service",
    "/lib/systemd/system/convgpud.service",
    "/usr/lib/systemd/system/convgpud.service",
    "/usr/local/lib/systemd/system/convgpud.service",
};

/* The kernel module's proc file, its control device, and the driver's NVML library. */
static const char *const driver_paths[] = {
    "/proc/driver/nvidia/version",
    "/dev/nvidiactl",
    "/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1",
    "/usr/lib/aarch64-linux-gnu/libnvidia-ml.so.1",
    "/usr/lib64/libnvidia-ml.so.1",
    "/usr/lib/libnvidia-ml.so.1",
};

static bool any_exists(const char *root, const char *const *paths, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        char p[PATH_MAX];
        if (snprintf(p, sizeof p, "%s%s", root, paths[i]) < (int)sizeof p &&
            access(p, F_OK) == 0)
            return true;
    }
    return false;
}

const char *cgc_daemon_start_hint(const char *host_root, const char *runtime_dir, char *out,
                                  size_t len)
{
    const char *root = host_root && strcmp(host_root, "/") != 0 ? host_root : "";
    char dir_arg[PATH_MAX + 16] = "";
    if (runtime_dir && *runtime_dir && strcmp(runtime_dir, "/run/convgpu") != 0)
        snprintf(dir_arg, sizeof dir_arg, " --runtime-dir %s", runtime_dir);
    if (any_exists(root, unit_paths, sizeof unit_paths / sizeof unit_paths[0]))
        snprintf(out, len, "start it: systemctl start convgpud (why it stopped: journalctl -u "
                           "convgpud)");
    else if (!any_exists(root, driver_paths, sizeof driver_paths / sizeof driver_paths[0]))
        snprintf(out, len, "no NVIDIA driver found here; start it on an emulated GPU: "
                           "convgpud%s --emulate 5GiB",
                 dir_arg);
    else
        snprintf(out, len, "start it: convgpud%s", dir_arg);
    return out;
}
