/* gpu.c — what the node's GPUs are: discovered through NVML (the real driver's, or the emulator's
 * with --emulate), and what one process's context costs on each, measured once at start in a
 * child process so the daemon itself never opens a CUDA context. */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cuda_types.h"
#include "daemon.h"
#include "log.h"
#include "gpu.h"
#include "nvml_types.h"
#include "size.h"



static int nvml_open(struct daemon *d, struct nvml *n, char *err, size_t errlen)
{
    char path[PATH_MAX + 32];
    if (d->opt.emulate[0])
        snprintf(path, sizeof path, "%s/libnvidia-ml.so.1", d->emu_dir);
    else
        snprintf(path, sizeof path, "libnvidia-ml.so.1");
    n->h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!n->h) {
        snprintf(err, errlen, "cannot load NVML (%s): %s%s", path, dlerror(),
                 d->opt.emulate[0] ? "" : "; is the NVIDIA driver installed? (or use --emulate 5GiB)");
        return -1;
    }
#define SYM(field, name)                                                                   \
    do {                                                                                   \
        *(void **)&n->field = dlsym(n->h, name);                                           \
        if (!n->field) {                                                                   \
            snprintf(err, errlen, "NVML lacks %s", name);                                  \
            return -1;                                                                     \
        }                                                                                  \
    } while (0)
    SYM(init, "nvmlInit_v2");
    SYM(shutdown, "nvmlShutdown");
    SYM(count, "nvmlDeviceGetCount_v2");
    SYM(handle, "nvmlDeviceGetHandleByIndex_v2");
    SYM(name, "nvmlDeviceGetName");
    SYM(uuid, "nvmlDeviceGetUUID");
    SYM(mem, "nvmlDeviceGetMemoryInfo");
    SYM(procs, "nvmlDeviceGetComputeRunningProcesses_v3");
    SYM(errstr, "nvmlErrorString");
#undef SYM
    nvmlReturn_t r = n->init();
    if (r != NVML_SUCCESS) {
        snprintf(err, errlen, "nvmlInit: %s", n->errstr(r));
        return -1;
    }
    return 0;
}

/* In the probe child: open a context on `index` and keep it until the parent has looked. CUDA
 * enumerates in PCI order here, as NVML does, so ordinal `index` is NVML's device `index`; the
 * minimal allocation forces a lazily created context to materialise. The child never calls NVML
 * (the parent initialised it; NVML does not promise to survive fork). */
static int probe_child(struct daemon *d, unsigned index)
{
    setenv("CUDA_DEVICE_ORDER", "PCI_BUS_ID", 1);
    unsetenv("CUDA_VISIBLE_DEVICES");
    char path[PATH_MAX + 32];
    if (d->opt.emulate[0])
        snprintf(path, sizeof path, "%s/libcuda.so.1", d->emu_dir);
    else
        snprintf(path, sizeof path, "libcuda.so.1");
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h)
        return -1;
    PFN_cuInit init;
    PFN_cuDeviceGet get;
    PFN_cuDevicePrimaryCtxRetain retain;
    PFN_cuCtxSetCurrent setcur;
    PFN_cuMemAlloc_v2 alloc;
    *(void **)&init = dlsym(h, "cuInit");
    *(void **)&get = dlsym(h, "cuDeviceGet");
    *(void **)&retain = dlsym(h, "cuDevicePrimaryCtxRetain");
    *(void **)&setcur = dlsym(h, "cuCtxSetCurrent");
    *(void **)&alloc = dlsym(h, "cuMemAlloc_v2");
    if (!init || !get || !retain || !setcur || !alloc)
        return -1;
    CUdevice dev;
    CUcontext ctx;
    CUdeviceptr ptr;
    if (init(0) != CUDA_SUCCESS || get(&dev, (int)index) != CUDA_SUCCESS ||
        retain(&ctx, dev) != CUDA_SUCCESS || setcur(ctx) != CUDA_SUCCESS ||
        alloc(&ptr, 1) != CUDA_SUCCESS)
        return -1;
    return 0;
}

/* This process's GPU memory on device `index` as NVML reports it; 0 when NVML does not say
 * (per-process figures are hidden under some vGPU and container setups). */
static uint64_t nvml_process_use(struct nvml *n, unsigned index, pid_t pid)
{
    nvmlDevice_t nd;
    if (n->handle(index, &nd) != NVML_SUCCESS)
        return 0;
    nvmlProcessInfo_t infos[256];
    unsigned count = 256;
    if (n->procs(nd, &count, infos) != NVML_SUCCESS)
        return 0;
    for (unsigned i = 0; i < count && i < 256; i++) {
        if (infos[i].pid != (unsigned)pid)
            continue;
        /* NVML marks "not available" with all ones. */
        if (infos[i].usedGpuMemory == ~0ull || infos[i].usedGpuMemory == 0xffffffffull)
            return 0;
        return infos[i].usedGpuMemory;
    }
    return 0;
}

static uint64_t probe_context(struct daemon *d, struct nvml *n, unsigned index)
{
    int ready[2], done[2];
    if (pipe2(ready, O_CLOEXEC) != 0)
        return 0;
    if (pipe2(done, O_CLOEXEC) != 0) {
        close(ready[0]);
        close(ready[1]);
        return 0;
    }
    pid_t pid = fork();
    if (pid < 0) {
        close(ready[0]);
        close(ready[1]);
        close(done[0]);
        close(done[1]);
        return 0;
    }
    if (pid == 0) {
        close(ready[0]);
        close(done[1]);
        char ok = probe_child(d, index) == 0 ? 'y' : 'n';
        ssize_t w = write(ready[1], &ok, 1);
        char c;
        ssize_t r = read(done[0], &c, 1); /* hold the context until the parent has measured */
        (void)r;
        _exit(w == 1 ? 0 : 1);
    }
    close(ready[1]);
    close(done[0]);
    char ok = 'n';
    ssize_t r;
    do
        r = read(ready[0], &ok, 1);
    while (r < 0 && errno == EINTR);
    uint64_t used = 0;
    if (r == 1 && ok == 'y')
        used = nvml_process_use(n, index, pid);
    close(done[1]); /* lets the child exit */
    close(ready[0]);
    int status;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    uint64_t gran = d->opt.granularity;
    return used > gran ? used - gran : used;
}

int gpu_discover(struct daemon *d, char *err, size_t errlen)
{
    struct nvml *np = calloc(1, sizeof *np);
    if (!np) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    struct nvml n = {0};
    if (nvml_open(d, &n, err, errlen) != 0) {
        if (n.h)
            dlclose(n.h);
        free(np);
        return -1;
    }
    unsigned count = 0;
    nvmlReturn_t r = n.count(&count);
    if (r != NVML_SUCCESS || count == 0) {
        snprintf(err, errlen, "no GPU found (%s)", r != NVML_SUCCESS ? n.errstr(r) : "count 0");
        goto fail;
    }
    if (count > CG_MAX_DEVICES)
        count = CG_MAX_DEVICES;
    for (unsigned i = 0; i < count; i++) {
        nvmlDevice_t nd;
        nvmlMemory_t mem;
        struct device *dev = &d->devices[i];
        if ((r = n.handle(i, &nd)) != NVML_SUCCESS || (r = n.mem(nd, &mem)) != NVML_SUCCESS) {
            snprintf(err, errlen, "GPU %u: %s", i, n.errstr(r));
            goto fail;
        }
        if (n.name(nd, dev->name, sizeof dev->name) != NVML_SUCCESS)
            snprintf(dev->name, sizeof dev->name, "GPU %u", i);
        if (n.uuid(nd, dev->uuid, sizeof dev->uuid) != NVML_SUCCESS)
            dev->uuid[0] = '\0';
        dev->total = mem.total;
        if (d->opt.context_charge) {
            dev->context_charge = d->opt.context_charge;
        } else {
            uint64_t t0 = loop_now_ns();
            dev->context_charge = probe_context(d, &n, i);
            if (dev->context_charge == 0) {
                snprintf(err, errlen, "GPU %u: could not measure the per-process context charge; "
                                      "give it with --context-charge SIZE", i);
                goto fail;
            }
            char b[CG_SIZE_BUFLEN];
            log_info("device %u: context charge measured: %s (%.0f ms)", i,
                     cg_format_size(dev->context_charge, b, sizeof b),
                     (double)(loop_now_ns() - t0) / 1e6);
        }
        /* The ledger counts pages; charges are whole pages. */
        dev->context_charge = (dev->context_charge + CG_LEDGER_PAGE - 1) / CG_LEDGER_PAGE *
                              CG_LEDGER_PAGE;
        char b1[CG_SIZE_BUFLEN], b2[CG_SIZE_BUFLEN];
        log_info("device %u: %s %s, %s, context charge %s", i, dev->name, dev->uuid,
                 cg_format_size(dev->total, b1, sizeof b1),
                 cg_format_size(dev->context_charge, b2, sizeof b2));
    }
    d->ndevices = count;
    *np = n;
    d->nvml = np; /* kept for the watchdog */
    return 0;
fail:
    n.shutdown();
    dlclose(n.h);
    free(np);
    return -1;
}
