/* module.c — modules and kernel launches. Kernels are built in and run synchronously on the
 * calling thread:
 *   complement(CUdeviceptr buf, size_t n)  bitwise NOT of n bytes at buf (the paper's sample)
 *   spin(unsigned long long microseconds)  keeps the device busy that long (NVML utilisation)
 * Arguments come through kernelParams or through `extra` (CU_LAUNCH_PARAM_BUFFER_POINTER with
 * the natural layout: complement {u64 buf @0, u64 n @8}, spin {u64 us @0}). */
#include "driver.h"
#include "image.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

struct CUfunc_st {
    struct CUmod_st *mod;
    int kernel;
};

struct CUmod_st {
    emu_obj hdr;
    unsigned mask;
    struct CUfunc_st fn[EMU_KERNEL_COUNT];
};

static CUresult load(CUmodule *module, const char *image, size_t len)
{
    struct CUctx_st *ctx;
    CUresult rc = emu_current(&ctx);
    if (rc != CUDA_SUCCESS)
        return rc;
    unsigned mask = 0;
    rc = emu_image_parse(image, len, &mask);
    if (rc != CUDA_SUCCESS)
        return rc;
    struct CUmod_st *m = calloc(1, sizeof *m);
    if (!m)
        return CUDA_ERROR_OUT_OF_MEMORY;
    m->mask = mask;
    for (int k = 0; k < EMU_KERNEL_COUNT; k++)
        m->fn[k] = (struct CUfunc_st){m, k};
    emu_wrlock();
    emu_obj_add(&m->hdr, EMU_K_MODULE, ctx);
    emu_unlock();
    *module = m;
    return CUDA_SUCCESS;
}

CUresult cuModuleLoadData(CUmodule *module, const void *image)
{
    CUresult rc = emu_enter();
    if (rc != CUDA_SUCCESS)
        return rc;
    if (!module || !image)
        return CUDA_ERROR_INVALID_VALUE;
    return load(module, image, EMU_IMAGE_MAX);
}

CUresult cuModuleLoad(CUmodule *module, const char *fname)
{
    CUresult rc = emu_enter();
    if (rc != CUDA_SUCCESS)
        return rc;
    if (!module || !fname)
        return CUDA_ERROR_INVALID_VALUE;
    int fd = open(fname, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return errno == ENOENT || errno == ENOTDIR ? CUDA_ERROR_FILE_NOT_FOUND
                                                   : CUDA_ERROR_OPERATING_SYSTEM;
    char *buf = malloc(EMU_IMAGE_MAX + 1);
    if (!buf) {
        close(fd);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    size_t len = 0;
    ssize_t n;
    while (len <= EMU_IMAGE_MAX &&
           (n = read(fd, buf + len, EMU_IMAGE_MAX + 1 - len)) > 0)
        len += (size_t)n;
    close(fd);
    if (len > EMU_IMAGE_MAX) {
        free(buf);
        return CUDA_ERROR_INVALID_IMAGE;
    }
    buf[len] = '\0';
    rc = load(module, buf, len + 1);
    free(buf);
    return rc;
}

void emu_module_destroy_obj(emu_obj *o)
{
    emu_obj_del(o);
    free(o);
}

CUresult cuModuleUnload(CUmodule hmod)
{
    CUresult rc = emu_enter();
    if (rc != CUDA_SUCCESS)
        return rc;
    emu_wrlock();
    emu_obj *o = emu_obj_find(hmod, EMU_K_MODULE);
    if (o)
        emu_module_destroy_obj(o);
    emu_unlock();
    return o ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

CUresult cuModuleGetFunction(CUfunction *hfunc, CUmodule hmod, const char *name)
{
    CUresult rc = emu_enter();
    if (rc != CUDA_SUCCESS)
        return rc;
    if (!hfunc || !name)
        return CUDA_ERROR_INVALID_VALUE;
    emu_rdlock();
    struct CUmod_st *m = (struct CUmod_st *)emu_obj_find(hmod, EMU_K_MODULE);
    rc = m ? CUDA_ERROR_NOT_FOUND : CUDA_ERROR_INVALID_HANDLE;
    for (int k = 0; m && k < EMU_KERNEL_COUNT; k++) {
        if ((m->mask & (1u << k)) && strcmp(name, emu_kernel_name(k)) == 0) {
            *hfunc = &m->fn[k];
            rc = CUDA_SUCCESS;
        }
    }
    emu_unlock();
    return rc;
}

/* Kernel id of f if it is a function of a loaded module, else -1. Lock held. */
static int resolve_function(CUfunction f)
{
    for (emu_obj *o = g_emu.objs.next; o != &g_emu.objs; o = o->next) {
        if (o->kind != EMU_K_MODULE)
            continue;
        struct CUmod_st *m = (struct CUmod_st *)o;
        for (int k = 0; k < EMU_KERNEL_COUNT; k++)
            if (f == &m->fn[k])
                return (m->mask & (1u << k)) ? k : -1;
    }
    return -1;
}

typedef struct {
    uint64_t a0, a1;
} kargs;

static CUresult read_args(int kernel, void **params, void **extra, kargs *out)
{
    int nargs = kernel == EMU_KERNEL_COMPLEMENT ? 2 : 1;
    if ((params && extra) || (!params && !extra))
        return CUDA_ERROR_INVALID_VALUE;
    if (params) {
        for (int i = 0; i < nargs; i++)
            if (!params[i])
                return CUDA_ERROR_INVALID_VALUE;
        memcpy(&out->a0, params[0], sizeof out->a0);
        if (nargs > 1)
            memcpy(&out->a1, params[1], sizeof out->a1);
        return CUDA_SUCCESS;
    }
    const char *buf = NULL;
    size_t size = 0;
    int have_size = 0;
    for (int i = 0; extra[i] != CU_LAUNCH_PARAM_END; i += 2) {
        if (i >= 64)
            return CUDA_ERROR_INVALID_VALUE;
        if (extra[i] == CU_LAUNCH_PARAM_BUFFER_POINTER) {
            buf = extra[i + 1];
        } else if (extra[i] == CU_LAUNCH_PARAM_BUFFER_SIZE) {
            if (!extra[i + 1])
                return CUDA_ERROR_INVALID_VALUE;
            memcpy(&size, extra[i + 1], sizeof size);
            have_size = 1;
        } else {
            return CUDA_ERROR_INVALID_VALUE;
        }
    }
    if (!buf || !have_size || size < (size_t)nargs * 8)
        return CUDA_ERROR_INVALID_VALUE;
    memcpy(&out->a0, buf, 8);
    if (nargs > 1)
        memcpy(&out->a1, buf + 8, 8);
    return CUDA_SUCCESS;
}

static void complement(unsigned char *p, size_t n)
{
    while (n > 0 && ((uintptr_t)p & 7)) {
        *p = (unsigned char)~*p;
        p++;
        n--;
    }
    uint64_t *w = (uint64_t *)(void *)p;
    for (; n >= 8; n -= 8, w++)
        *w = ~*w;
    for (p = (unsigned char *)w; n > 0; n--, p++)
        *p = (unsigned char)~*p;
}

static void spin(uint64_t us)
{
    struct timespec ts = {(time_t)(us / 1000000), (long)(us % 1000000) * 1000};
    while (clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, &ts) == EINTR) {
    }
}

static CUresult launch(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                       unsigned by, unsigned bz, unsigned shmem, CUstream s, void **params,
                       void **extra)
{
    struct CUctx_st *ctx;
    kargs args = {0, 0};
    CUresult rc = emu_enter();
    if (rc != CUDA_SUCCESS)
        return rc;
    emu_rdlock();
    int k = resolve_function(f);
    if (k < 0) {
        rc = CUDA_ERROR_INVALID_HANDLE;
    } else if ((rc = emu_stream_ctx(s, &ctx)) != CUDA_SUCCESS) {
    } else if (!gx || !gy || !gz || !bx || !by || !bz || bz > 64 || gy > 65535 ||
               gz > 65535 || (uint64_t)bx * by * bz > 1024 || shmem > 163u * 1024) {
        rc = CUDA_ERROR_INVALID_VALUE;
    } else {
        rc = read_args(k, params, extra, &args);
    }
    if (rc == CUDA_SUCCESS && k == EMU_KERNEL_COMPLEMENT) {
        /* A bad address faults on a GPU; here it is caught before touching memory. */
        if (emu_range((uintptr_t)args.a0, (size_t)args.a1, 1) != CUDA_SUCCESS) {
            rc = CUDA_ERROR_ILLEGAL_ADDRESS;
        } else {
            emu_shared_busy_begin(&g_emu.sh, ctx->phys);
            complement((unsigned char *)(uintptr_t)args.a0, (size_t)args.a1);
            emu_shared_busy_end(&g_emu.sh, ctx->phys);
        }
    }
    emu_unlock();
    if (rc == CUDA_SUCCESS && k == EMU_KERNEL_SPIN) {
        emu_shared_busy_begin(&g_emu.sh, ctx->phys);
        spin(args.a0);
        emu_shared_busy_end(&g_emu.sh, ctx->phys);
    }
    return rc;
}

CUresult cuLaunchKernel(CUfunction f, unsigned int gridDimX, unsigned int gridDimY,
                        unsigned int gridDimZ, unsigned int blockDimX, unsigned int blockDimY,
                        unsigned int blockDimZ, unsigned int sharedMemBytes, CUstream hStream,
                        void **kernelParams, void **extra)
{
    return launch(f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ,
                  sharedMemBytes, hStream, kernelParams, extra);
}

CUresult cuLaunchCooperativeKernel(CUfunction f, unsigned int gridDimX, unsigned int gridDimY,
                                   unsigned int gridDimZ, unsigned int blockDimX,
                                   unsigned int blockDimY, unsigned int blockDimZ,
                                   unsigned int sharedMemBytes, CUstream hStream,
                                   void **kernelParams)
{
    return launch(f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ,
                  sharedMemBytes, hStream, kernelParams, NULL);
}

CUresult cuLaunchKernelEx(const CUlaunchConfig *c, CUfunction f, void **kernelParams,
                          void **extra)
{
    if (!c || (c->numAttrs > 0 && !c->attrs)) {
        CUresult rc = emu_enter();
        return rc != CUDA_SUCCESS ? rc : CUDA_ERROR_INVALID_VALUE;
    }
    return launch(f, c->gridDimX, c->gridDimY, c->gridDimZ, c->blockDimX, c->blockDimY,
                  c->blockDimZ, c->sharedMemBytes, c->hStream, kernelParams, extra);
}
