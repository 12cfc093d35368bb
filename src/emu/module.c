/* module.c — modules, functions and kernel launches. Kernels are built in (exec.c runs them):
 *   complement(CUdeviceptr buf, size_t n)  bitwise NOT of n bytes at buf (the paper's sample)
 *   spin(unsigned long long microseconds)  occupies the device that long (NVML utilisation)
 * A launch checks its function, grid, stream and arguments, copies the argument values into an
 * item and queues it on the stream (workq.h): it returns before the kernel runs, and a fault
 * in the kernel (complement over memory that is not the caller's) is the context's sticky error,
 * reported by the next call, as on a GPU. Arguments come through kernelParams or through
 * `extra` (CU_LAUNCH_PARAM_BUFFER_POINTER with the natural layout: complement {u64 buf @0,
 * u64 n @8}, spin {u64 us @0}). */
#include "module.h"
#include "image.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
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

/* JIT options are accepted and ignored (nothing is compiled); the outputs a caller may read
 * are written: empty logs, no compile time. */
CUresult cuModuleLoadDataEx(CUmodule *module, const void *image, unsigned int numOptions,
                            CUjit_option *options, void **optionValues)
{
    CUresult rc = emu_enter();
    if (rc != CUDA_SUCCESS)
        return rc;
    if (!module || !image || (numOptions > 0 && (!options || !optionValues)))
        return CUDA_ERROR_INVALID_VALUE;
    for (unsigned i = 0; i < numOptions; i++)
        if ((unsigned)options[i] >= (unsigned)CU_JIT_NUM_OPTIONS)
            return CUDA_ERROR_INVALID_VALUE;
    rc = load(module, image, EMU_IMAGE_MAX);
    for (unsigned i = 0; i < numOptions; i++) {
        if (options[i] == CU_JIT_WALL_TIME) {
            float none = 0.0f;
            memcpy(&optionValues[i], &none, sizeof none);
        } else if (options[i] == CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES ||
                   options[i] == CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES) {
            CUjit_option buf = options[i] == CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES
                                   ? CU_JIT_INFO_LOG_BUFFER
                                   : CU_JIT_ERROR_LOG_BUFFER;
            for (unsigned j = 0; j < numOptions; j++)
                if (options[j] == buf && optionValues[j] && (uintptr_t)optionValues[i] > 0)
                    *(char *)optionValues[j] = '\0';
            optionValues[i] = (void *)(uintptr_t)0; /* bytes of log written */
        }
    }
    return rc;
}

/* Built-in kernels have no module-scope variables: every name is not found. */
CUresult cuModuleGetGlobal_v2(CUdeviceptr *dptr, size_t *bytes, CUmodule hmod, const char *name)
{
    CUresult rc = emu_enter();
    if (rc != CUDA_SUCCESS)
        return rc;
    if (!name)
        return CUDA_ERROR_INVALID_VALUE;
    emu_rdlock();
    emu_obj *o = emu_obj_find(hmod, EMU_K_MODULE);
    emu_unlock();
    (void)dptr;
    (void)bytes;
    return o ? CUDA_ERROR_NOT_FOUND : CUDA_ERROR_INVALID_HANDLE;
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

int emu_resolve_function(CUfunction f)
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

CUresult emu_read_args(int kernel, void **params, void **extra, emu_kcall *out)
{
    int nargs = kernel == EMU_KERNEL_COMPLEMENT ? 2 : 1;
    out->kernel = kernel;
    out->a0 = out->a1 = 0;
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

CUresult emu_check_dims(unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                        unsigned bz, unsigned shmem)
{
    if (!gx || !gy || !gz || !bx || !by || !bz || bz > 64 || gy > 65535 || gz > 65535 ||
        (uint64_t)bx * by * bz > 1024 || shmem > 163u * 1024)
        return CUDA_ERROR_INVALID_VALUE;
    return CUDA_SUCCESS;
}

static CUresult launch(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                       unsigned by, unsigned bz, unsigned shmem, CUstream h, void **params,
                       void **extra, int ptsz)
{
    struct CUstream_st *s = NULL;
    emu_item it = {.kind = EMU_I_KERNEL};
    CUresult rc = emu_enter();
    if (rc != CUDA_SUCCESS)
        return rc;
    emu_rdlock();
    int k = emu_resolve_function(f);
    if (k < 0)
        rc = CUDA_ERROR_INVALID_HANDLE;
    else if ((rc = emu_stream_get_locked(h, ptsz, &s)) != CUDA_SUCCESS)
        s = NULL;
    else if ((rc = emu_check_dims(gx, gy, gz, bx, by, bz, shmem)) == CUDA_SUCCESS)
        rc = emu_read_args(k, params, extra, &it.u.k);
    emu_unlock();
    unsigned dims[7] = {gx, gy, gz, bx, by, bz, shmem};
    memcpy(it.u.k.dims, dims, sizeof dims);
    it.u.k.func = f;
    if (rc == CUDA_SUCCESS)
        rc = emu_submit(s, &it, 0);
    if (s)
        emu_stream_put(s);
    return rc;
}

CUresult cuLaunchKernel(CUfunction f, unsigned int gridDimX, unsigned int gridDimY,
                        unsigned int gridDimZ, unsigned int blockDimX, unsigned int blockDimY,
                        unsigned int blockDimZ, unsigned int sharedMemBytes, CUstream hStream,
                        void **kernelParams, void **extra)
{
    return launch(f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ,
                  sharedMemBytes, hStream, kernelParams, extra, 0);
}

CUresult cuLaunchKernel_ptsz(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz,
                             unsigned int bx, unsigned int by, unsigned int bz,
                             unsigned int shmem, CUstream s, void **params, void **extra)
{
    return launch(f, gx, gy, gz, bx, by, bz, shmem, s, params, extra, 1);
}

CUresult cuLaunchCooperativeKernel(CUfunction f, unsigned int gridDimX, unsigned int gridDimY,
                                   unsigned int gridDimZ, unsigned int blockDimX,
                                   unsigned int blockDimY, unsigned int blockDimZ,
                                   unsigned int sharedMemBytes, CUstream hStream,
                                   void **kernelParams)
{
    return launch(f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ,
                  sharedMemBytes, hStream, kernelParams, NULL, 0);
}

CUresult cuLaunchCooperativeKernel_ptsz(CUfunction f, unsigned int gx, unsigned int gy,
                                        unsigned int gz, unsigned int bx, unsigned int by,
                                        unsigned int bz, unsigned int shmem, CUstream s,
                                        void **params)
{
    return launch(f, gx, gy, gz, bx, by, bz, shmem, s, params, NULL, 1);
}

static CUresult launch_ex(const CUlaunchConfig *c, CUfunction f, void **params, void **extra,
                          int ptsz)
{
    if (!c || (c->numAttrs > 0 && !c->attrs)) {
        CUresult rc = emu_enter();
        return rc != CUDA_SUCCESS ? rc : CUDA_ERROR_INVALID_VALUE;
    }
    return launch(f, c->gridDimX, c->gridDimY, c->gridDimZ, c->blockDimX, c->blockDimY,
                  c->blockDimZ, c->sharedMemBytes, c->hStream, params, extra, ptsz);
}

CUresult cuLaunchKernelEx(const CUlaunchConfig *c, CUfunction f, void **kernelParams,
                          void **extra)
{
    return launch_ex(c, f, kernelParams, extra, 0);
}

CUresult cuLaunchKernelEx_ptsz(const CUlaunchConfig *c, CUfunction f, void **kernelParams,
                               void **extra)
{
    return launch_ex(c, f, kernelParams, extra, 1);
}

/* Deprecated but exported: one cooperative launch per device, each on a stream of its own
 * (a created stream: the default streams are refused, as the driver refuses them). */
#define EMU_MULTI_DEVICE_FLAGS 0x3u /* NO_PRE_LAUNCH_SYNC | NO_POST_LAUNCH_SYNC */

CUresult cuLaunchCooperativeKernelMultiDevice(CUDA_LAUNCH_PARAMS *list, unsigned int numDevices,
                                              unsigned int flags)
{
    CUresult rc = emu_enter();
    if (rc != CUDA_SUCCESS)
        return rc;
    if (!list || numDevices == 0 || numDevices > g_emu.nvis || (flags & ~EMU_MULTI_DEVICE_FLAGS))
        return CUDA_ERROR_INVALID_VALUE;
    unsigned seen = 0;
    emu_rdlock();
    for (unsigned i = 0; i < numDevices && rc == CUDA_SUCCESS; i++) {
        CUstream h = list[i].hStream;
        const emu_obj *o = h == NULL || h == CU_STREAM_LEGACY || h == CU_STREAM_PER_THREAD
                               ? NULL
                               : emu_obj_find(h, EMU_K_STREAM);
        if (!o)
            rc = CUDA_ERROR_INVALID_HANDLE;
        else if (!emu_ctx_valid(o->ctx))
            rc = CUDA_ERROR_INVALID_CONTEXT;
        else if (seen & (1u << o->ctx->phys))
            rc = CUDA_ERROR_INVALID_DEVICE; /* two launches on one device */
        else
            seen |= 1u << o->ctx->phys;
    }
    emu_unlock();
    for (unsigned i = 0; i < numDevices && rc == CUDA_SUCCESS; i++) {
        const CUDA_LAUNCH_PARAMS *p = &list[i];
        rc = launch(p->function, p->gridDimX, p->gridDimY, p->gridDimZ, p->blockDimX,
                    p->blockDimY, p->blockDimZ, p->sharedMemBytes, p->hStream, p->kernelParams,
                    NULL, 0);
    }
    return rc;
}

CUresult cuFuncGetAttribute(int *pi, CUfunction_attribute attrib, CUfunction hfunc)
{
    CUresult rc = emu_enter();
    if (rc != CUDA_SUCCESS)
        return rc;
    emu_rdlock();
    int k = emu_resolve_function(hfunc);
    emu_unlock();
    if (k < 0)
        return CUDA_ERROR_INVALID_HANDLE;
    if (!pi)
        return CUDA_ERROR_INVALID_VALUE;
    switch (attrib) {
    case CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK: *pi = 1024; break;
    case CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES: *pi = 0; break;
    case CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES: *pi = 0; break;
    case CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES: *pi = 0; break;
    case CU_FUNC_ATTRIBUTE_NUM_REGS: *pi = 16; break;
    case CU_FUNC_ATTRIBUTE_PTX_VERSION: *pi = EMU_COMPUTE_CAPABILITY; break;
    case CU_FUNC_ATTRIBUTE_BINARY_VERSION: *pi = EMU_COMPUTE_CAPABILITY; break;
    case CU_FUNC_ATTRIBUTE_CACHE_MODE_CA: *pi = 0; break;
    case CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES: *pi = 48 * 1024; break;
    case CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT: *pi = -1; break;
    case CU_FUNC_ATTRIBUTE_CLUSTER_SIZE_MUST_BE_SET: *pi = 0; break;
    case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH:
    case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_HEIGHT:
    case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_DEPTH: *pi = 0; break;
    case CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED: *pi = 0; break;
    case CU_FUNC_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE: *pi = 0; break;
    default: return CUDA_ERROR_INVALID_VALUE;
    }
    return CUDA_SUCCESS;
}
