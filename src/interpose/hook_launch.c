/* hook_launch.c — every way to launch work on the device passes the compute gate first (gate.h):
 * cuLaunchKernel, cuLaunchKernelEx, cuLaunchCooperativeKernel (each also _ptsz),
 * cuLaunchCooperativeKernelMultiDevice, and cuGraphLaunch (a whole graph is one launch here; its
 * device time is measured like any other, so a graph is held to the share as a kernel is). The
 * launch itself is the driver's, untouched; after it, a container with a share bounds how much
 * launched work may still be ahead (run-ahead, gate.c). */
#include "gate.h"

#define REAL_OR(sym) PFN_##sym f = CG_REAL(sym); if (!f) return CUDA_ERROR_NOT_INITIALIZED

CG_EXPORT CUresult cuLaunchKernel(CUfunction fn, unsigned int gx, unsigned int gy, unsigned int gz,
                                  unsigned int bx, unsigned int by, unsigned int bz,
                                  unsigned int shmem, CUstream s, void **params, void **extra)
{
    REAL_OR(cuLaunchKernel);
    struct cg_gate_ticket l = cg_gate_pass_launch();
    CUresult r = f(fn, gx, gy, gz, bx, by, bz, shmem, s, params, extra);
    cg_gate_launched(l, r, s, 0);
    return r;
}

CG_EXPORT CUresult cuLaunchKernel_ptsz(CUfunction fn, unsigned int gx, unsigned int gy,
                                       unsigned int gz, unsigned int bx, unsigned int by,
                                       unsigned int bz, unsigned int shmem, CUstream s,
                                       void **params, void **extra)
{
    REAL_OR(cuLaunchKernel_ptsz);
    struct cg_gate_ticket l = cg_gate_pass_launch();
    CUresult r = f(fn, gx, gy, gz, bx, by, bz, shmem, s, params, extra);
    cg_gate_launched(l, r, s, 1);
    return r;
}

CG_EXPORT CUresult cuLaunchKernelEx(const CUlaunchConfig *config, CUfunction fn, void **params,
                                    void **extra)
{
    REAL_OR(cuLaunchKernelEx);
    struct cg_gate_ticket l = cg_gate_pass_launch();
    CUresult r = f(config, fn, params, extra);
    cg_gate_launched(l, r, config ? config->hStream : NULL, 0);
    return r;
}

CG_EXPORT CUresult cuLaunchKernelEx_ptsz(const CUlaunchConfig *config, CUfunction fn,
                                         void **params, void **extra)
{
    REAL_OR(cuLaunchKernelEx_ptsz);
    struct cg_gate_ticket l = cg_gate_pass_launch();
    CUresult r = f(config, fn, params, extra);
    cg_gate_launched(l, r, config ? config->hStream : NULL, 1);
    return r;
}

CG_EXPORT CUresult cuLaunchCooperativeKernel(CUfunction fn, unsigned int gx, unsigned int gy,
                                             unsigned int gz, unsigned int bx, unsigned int by,
                                             unsigned int bz, unsigned int shmem, CUstream s,
                                             void **params)
{
    REAL_OR(cuLaunchCooperativeKernel);
    struct cg_gate_ticket l = cg_gate_pass_launch();
    CUresult r = f(fn, gx, gy, gz, bx, by, bz, shmem, s, params);
    cg_gate_launched(l, r, s, 0);
    return r;
}

CG_EXPORT CUresult cuLaunchCooperativeKernel_ptsz(CUfunction fn, unsigned int gx, unsigned int gy,
                                                  unsigned int gz, unsigned int bx,
                                                  unsigned int by, unsigned int bz,
                                                  unsigned int shmem, CUstream s, void **params)
{
    REAL_OR(cuLaunchCooperativeKernel_ptsz);
    struct cg_gate_ticket l = cg_gate_pass_launch();
    CUresult r = f(fn, gx, gy, gz, bx, by, bz, shmem, s, params);
    cg_gate_launched(l, r, s, 1);
    return r;
}

CG_EXPORT CUresult cuLaunchCooperativeKernelMultiDevice(CUDA_LAUNCH_PARAMS *list,
                                                        unsigned int ndev, unsigned int flags)
{
    REAL_OR(cuLaunchCooperativeKernelMultiDevice);
    struct cg_gate_ticket t = cg_gate_pass_launch(); /* on several streams: no marks */
    CUresult r = f(list, ndev, flags);
    cg_gate_leave(t);
    return r;
}

CG_EXPORT CUresult cuGraphLaunch(CUgraphExec exec, CUstream s)
{
    REAL_OR(cuGraphLaunch);
    struct cg_gate_ticket l = cg_gate_pass_launch();
    CUresult r = f(exec, s);
    cg_gate_launched(l, r, s, 0);
    return r;
}

CG_EXPORT CUresult cuGraphLaunch_ptsz(CUgraphExec exec, CUstream s)
{
    REAL_OR(cuGraphLaunch_ptsz);
    struct cg_gate_ticket l = cg_gate_pass_launch();
    CUresult r = f(exec, s);
    cg_gate_launched(l, r, s, 1);
    return r;
}
