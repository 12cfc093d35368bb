/* test_graph.c — CUDA graphs on the emulator: stream capture records work instead of running it
 * (kernels, sets, copies between device and page-locked memory, host functions), a captured
 * graph is instantiated and launched twice with the expected results each time; a graph built
 * by hand with dependencies runs in dependency order; capture refuses what it cannot record
 * and says so at its end; and every graph call answers bad arguments as the driver does. */
#include "emu_test.h"

#include <stdio.h>
#include <string.h>

static t_kernels k;
static int order[16], norder;

static void mark(void *v) { order[norder++] = (int)(intptr_t)v; }

static void capture_and_launch(void)
{
    enum { N = 4096 };
    CUstream s;
    CUdeviceptr p;
    unsigned char *host;
    CUgraph g;
    CUgraphExec x;
    CUstreamCaptureStatus st;
    CHECK_OK(cu.cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    CHECK_OK(cu.cuMemAlloc_v2(&p, N));
    CHECK_OK(cu.cuMemAllocHost_v2((void **)&host, N));
    CHECK_OK(cu.cuMemsetD8_v2(p, 0x11, N));

    CHECK_OK(cu.cuStreamIsCapturing(s, &st));
    CHECK_EQ(st, CU_STREAM_CAPTURE_STATUS_NONE);
    CHECK_OK(cu.cuStreamBeginCapture_v2(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
    CHECK_OK(cu.cuStreamIsCapturing(s, &st));
    CHECK_EQ(st, CU_STREAM_CAPTURE_STATUS_ACTIVE);
    CHECK_CU(cu.cuStreamBeginCapture_v2(s, CU_STREAM_CAPTURE_MODE_GLOBAL),
             CUDA_ERROR_ILLEGAL_STATE);
    /* Recorded, not run: the memory is untouched until the graph is launched. */
    CHECK_OK(cu.cuMemsetD8Async(p, 0x0f, N, s));
    t_complement(&k, s, p, N);
    t_complement(&k, s, p, N / 2);
    CHECK_OK(cu.cuLaunchHostFunc(s, mark, (void *)1));
    CHECK_OK(cu.cuMemcpyDtoHAsync_v2(host, p, N, s));
    CHECK_OK(cu.cuGraphCreate(&g, 0)); /* (another graph, to see handles told apart) */
    CUgraph captured;
    CHECK_OK(cu.cuStreamEndCapture(s, &captured));
    CHECK_OK(cu.cuStreamIsCapturing(s, &st));
    CHECK_EQ(st, CU_STREAM_CAPTURE_STATUS_NONE);
    unsigned char b;
    CHECK_OK(cu.cuMemcpyDtoH_v2(&b, p, 1));
    CHECK_EQ(b, 0x11);
    CHECK_EQ(norder, 0);

    size_t n = 0;
    CHECK_OK(cu.cuGraphGetNodes(captured, NULL, &n));
    CHECK_EQ(n, 5);
    CUgraphNode nodes[8];
    n = 8;
    CHECK_OK(cu.cuGraphGetNodes(captured, nodes, &n));
    CHECK_EQ(n, 5);
    CHECK(nodes[5] == NULL && nodes[7] == NULL);
    CUgraphNodeType types[5], want[5] = {CU_GRAPH_NODE_TYPE_MEMSET, CU_GRAPH_NODE_TYPE_KERNEL,
                                         CU_GRAPH_NODE_TYPE_KERNEL, CU_GRAPH_NODE_TYPE_HOST,
                                         CU_GRAPH_NODE_TYPE_MEMCPY};
    for (int i = 0; i < 5; i++) {
        CHECK_OK(cu.cuGraphNodeGetType(nodes[i], &types[i]));
        CHECK_EQ(types[i], want[i]);
    }
    CUDA_KERNEL_NODE_PARAMS kp;
    CHECK_OK(cu.cuGraphKernelNodeGetParams_v2(nodes[2], &kp));
    CHECK(kp.func == k.complement && kp.blockDimX == 256);
    CHECK_EQ(*(CUdeviceptr *)kp.kernelParams[0], p);
    CHECK_EQ(*(size_t *)kp.kernelParams[1], N / 2);
    CHECK_CU(cu.cuGraphKernelNodeGetParams_v2(nodes[0], &kp), CUDA_ERROR_INVALID_VALUE);

    CHECK_OK(cu.cuGraphInstantiateWithFlags(&x, captured, 0));
    for (int round = 1; round <= 2; round++) {
        memset(host, 0, N);
        CHECK_OK(cu.cuGraphLaunch(x, s));
        CHECK_OK(cu.cuStreamSynchronize(s));
        /* 0x0f, complemented twice in the first half and once in the second. */
        CHECK(host[0] == 0x0f && host[N / 2 - 1] == 0x0f);
        CHECK(host[N / 2] == 0xf0 && host[N - 1] == 0xf0);
        CHECK_EQ(norder, round);
    }
    /* The same graph through the per-thread stream, and destroyed while queued. */
    CHECK_OK(cu.cuGraphLaunch_ptsz(x, NULL));
    CHECK_OK(cu.cuGraphExecDestroy(x));
    CHECK_OK(cu.cuStreamSynchronize_ptsz(NULL));
    CHECK_EQ(norder, 3);
    CHECK_CU(cu.cuGraphExecDestroy(x), CUDA_ERROR_INVALID_VALUE);
    CHECK_CU(cu.cuGraphLaunch(x, s), CUDA_ERROR_INVALID_VALUE);
    CHECK_OK(cu.cuGraphDestroy(captured));
    CHECK_OK(cu.cuGraphDestroy(g));
    CHECK_CU(cu.cuGraphDestroy(g), CUDA_ERROR_INVALID_VALUE);
    CHECK_OK(cu.cuMemFreeHost(host));
    CHECK_OK(cu.cuMemFree_v2(p));
    CHECK_OK(cu.cuStreamDestroy_v2(s));
}

static void by_hand(void)
{
    CUgraph g;
    CUgraphNode a, b, c, e;
    CUgraphExec x;
    CUdeviceptr p;
    size_t n = 16;
    unsigned char v[16];
    CHECK_OK(cu.cuMemAlloc_v2(&p, n));
    CHECK_OK(cu.cuMemsetD8_v2(p, 0x33, n));
    CHECK_OK(cu.cuGraphCreate(&g, 0));
    void *params[] = {&p, &n};
    CUDA_KERNEL_NODE_PARAMS kp = {k.complement, 1, 1, 1, 16, 1, 1, 0, params, NULL, NULL, NULL};
    CHECK_OK(cu.cuGraphAddKernelNode_v2(&a, g, NULL, 0, &kp));
    n = 8; /* copied at creation: a keeps 16 */
    CHECK_OK(cu.cuGraphAddKernelNode_v2(&b, g, &a, 1, &kp));
    n = 4;
    CUDA_KERNEL_NODE_PARAMS_v1 k1 = {k.complement, 1, 1, 1, 16, 1, 1, 0, params, NULL};
    CUgraphNode ab[2] = {a, b};
    CHECK_OK(cu.cuGraphAddEmptyNode(&e, g, ab, 2));
    CHECK_OK(cu.cuGraphAddKernelNode(&c, g, &e, 1, &k1));
    CHECK_OK(cu.cuGraphInstantiateWithFlags(&x, g, 0));
    CHECK_OK(cu.cuGraphLaunch(x, NULL));
    CHECK_OK(cu.cuCtxSynchronize());
    CHECK_OK(cu.cuMemcpyDtoH_v2(v, p, 16));
    /* Each node kept the length it was created with: a 16, b 8, c 4 bytes. */
    CHECK(v[0] == 0xcc && v[3] == 0xcc && v[4] == 0x33 && v[7] == 0x33);
    CHECK(v[8] == 0xcc && v[15] == 0xcc);
    CHECK_OK(cu.cuGraphExecDestroy(x));

    /* Bad arguments. */
    CUgraph other;
    CUgraphNode z;
    CHECK_OK(cu.cuGraphCreate(&other, 0));
    CHECK_CU(cu.cuGraphCreate(&other, 1), CUDA_ERROR_INVALID_VALUE);
    CHECK_CU(cu.cuGraphCreate(NULL, 0), CUDA_ERROR_INVALID_VALUE);
    CHECK_CU(cu.cuGraphAddKernelNode_v2(&z, other, &a, 1, &kp), CUDA_ERROR_INVALID_VALUE);
    CHECK_CU(cu.cuGraphAddKernelNode_v2(&z, g, ab, 0, NULL), CUDA_ERROR_INVALID_VALUE);
    CHECK_CU(cu.cuGraphAddKernelNode_v2(&z, g, NULL, 1, &kp), CUDA_ERROR_INVALID_VALUE);
    CUgraphNode twice[2] = {a, a};
    CHECK_CU(cu.cuGraphAddKernelNode_v2(&z, g, twice, 2, &kp), CUDA_ERROR_INVALID_VALUE);
    CUDA_KERNEL_NODE_PARAMS bad = kp;
    bad.func = (CUfunction)&bad;
    CHECK_CU(cu.cuGraphAddKernelNode_v2(&z, g, NULL, 0, &bad), CUDA_ERROR_INVALID_HANDLE);
    bad.func = NULL;
    CHECK_CU(cu.cuGraphAddKernelNode_v2(&z, g, NULL, 0, &bad), CUDA_ERROR_INVALID_VALUE);
    bad.kern = (CUkernel)&bad;
    CHECK_CU(cu.cuGraphAddKernelNode_v2(&z, g, NULL, 0, &bad), CUDA_ERROR_NOT_SUPPORTED);
    bad = kp;
    bad.blockDimX = 2048;
    CHECK_CU(cu.cuGraphAddKernelNode_v2(&z, g, NULL, 0, &bad), CUDA_ERROR_INVALID_VALUE);
    CHECK_CU(cu.cuGraphAddKernelNode_v2(&z, (CUgraph)&bad, NULL, 0, &kp), CUDA_ERROR_INVALID_VALUE);
    CHECK_CU(cu.cuGraphAddEmptyNode(NULL, g, NULL, 0), CUDA_ERROR_INVALID_VALUE);
    CUgraphNodeType t;
    CHECK_CU(cu.cuGraphNodeGetType((CUgraphNode)&bad, &t), CUDA_ERROR_INVALID_VALUE);
    CHECK_CU(cu.cuGraphNodeGetType(a, NULL), CUDA_ERROR_INVALID_VALUE);
    CHECK_OK(cu.cuGraphNodeGetType(e, &t));
    CHECK_EQ(t, CU_GRAPH_NODE_TYPE_EMPTY);
    size_t cnt = 2;
    CUgraphNode two[2];
    CHECK_OK(cu.cuGraphGetNodes(g, two, &cnt));
    CHECK(cnt == 2 && two[0] == a && two[1] == b);
    CHECK_CU(cu.cuGraphGetNodes(g, two, NULL), CUDA_ERROR_INVALID_VALUE);
    CHECK_CU(cu.cuGraphGetNodes((CUgraph)&bad, NULL, &cnt), CUDA_ERROR_INVALID_VALUE);
    CHECK_CU(cu.cuGraphInstantiateWithFlags(&x, g, CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD),
             CUDA_ERROR_INVALID_VALUE);
    CHECK_CU(cu.cuGraphInstantiateWithFlags(&x, g, CUDA_GRAPH_INSTANTIATE_FLAG_DEVICE_LAUNCH),
             CUDA_ERROR_NOT_SUPPORTED);
    CHECK_CU(cu.cuGraphInstantiateWithFlags(NULL, g, 0), CUDA_ERROR_INVALID_VALUE);
    CHECK_CU(cu.cuGraphInstantiateWithFlags(&x, (CUgraph)&bad, 0), CUDA_ERROR_INVALID_VALUE);
    char log[8] = "x";
    CUgraphNode err = a;
    CHECK_OK(cu.cuGraphInstantiate_v2(&x, other, &err, log, sizeof log));
    CHECK(err == NULL && log[0] == '\0');
    CHECK_OK(cu.cuGraphLaunch(x, NULL)); /* an empty graph */
    CHECK_CU(cu.cuGraphLaunch(x, (CUstream)&bad), CUDA_ERROR_INVALID_HANDLE);
    CHECK_OK(cu.cuCtxSynchronize());
    CHECK_OK(cu.cuGraphExecDestroy(x));
    CHECK_OK(cu.cuGraphDestroy(other));
    CHECK_OK(cu.cuGraphDestroy(g));
    CHECK_CU(cu.cuGraphNodeGetType(a, &t), CUDA_ERROR_INVALID_VALUE); /* gone with g */
    CHECK_OK(cu.cuMemFree_v2(p));
}

static void capture_refusals(void)
{
    CUstream s;
    CUgraph g = (CUgraph)&s;
    CUstreamCaptureStatus st;
    CUevent e;
    unsigned char pageable[16];
    CUdeviceptr p;
    CHECK_OK(cu.cuMemAlloc_v2(&p, sizeof pageable));
    CHECK_OK(cu.cuStreamCreate(&s, 0));
    CHECK_OK(cu.cuEventCreate(&e, 0));
    /* The legacy stream cannot capture; a stream not capturing cannot end. */
    CHECK_CU(cu.cuStreamBeginCapture_v2(NULL, CU_STREAM_CAPTURE_MODE_GLOBAL),
             CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
    CHECK_CU(cu.cuStreamEndCapture(s, &g), CUDA_ERROR_ILLEGAL_STATE);
    CHECK_CU(cu.cuStreamBeginCapture_v2(s, (CUstreamCaptureMode)7), CUDA_ERROR_INVALID_VALUE);
    CHECK_CU(cu.cuStreamIsCapturing(s, NULL), CUDA_ERROR_INVALID_VALUE);
    /* A copy from pageable memory would have to wait: refused, the capture invalidated. */
    CHECK_OK(cu.cuStreamBeginCapture(s));
    t_spin(&k, s, 0);
    CHECK_CU(cu.cuMemcpyHtoDAsync_v2(p, pageable, sizeof pageable, s),
             CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
    CHECK_OK(cu.cuStreamIsCapturing(s, &st));
    CHECK_EQ(st, CU_STREAM_CAPTURE_STATUS_INVALIDATED);
    CHECK_CU(cu.cuStreamEndCapture(s, &g), CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
    CHECK(g == NULL);
    /* Synchronising a capturing stream, or waiting on an event from outside, likewise. */
    CHECK_OK(cu.cuStreamBeginCapture_v2(s, CU_STREAM_CAPTURE_MODE_RELAXED));
    CHECK_CU(cu.cuStreamSynchronize(s), CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
    CHECK_CU(cu.cuStreamEndCapture(s, &g), CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
    CHECK_OK(cu.cuEventRecord(e, NULL));
    CHECK_OK(cu.cuStreamBeginCapture_v2(s, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL));
    CHECK_CU(cu.cuStreamWaitEvent(s, e, 0), CUDA_ERROR_STREAM_CAPTURE_ISOLATION);
    CHECK_CU(cu.cuStreamEndCapture(s, &g), CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
    /* An event recorded inside the capture belongs to it. */
    CHECK_OK(cu.cuStreamBeginCapture_v2(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
    CHECK_OK(cu.cuEventRecord(e, s));
    CHECK_OK(cu.cuStreamWaitEvent(s, e, 0));
    CHECK_CU(cu.cuEventQuery(e), CUDA_ERROR_CAPTURED_EVENT);
    CHECK_CU(cu.cuStreamEndCapture(s, NULL), CUDA_ERROR_INVALID_VALUE);
    CHECK_OK(cu.cuStreamEndCapture(s, &g));
    size_t n = 9;
    CHECK_OK(cu.cuGraphGetNodes(g, NULL, &n));
    CHECK_EQ(n, 0);
    CHECK_OK(cu.cuGraphDestroy(g));
    /* A capture abandoned with its stream leaves nothing behind. */
    CHECK_OK(cu.cuStreamBeginCapture_v2(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
    t_spin(&k, s, 0);
    CHECK_OK(cu.cuStreamDestroy_v2(s));
    CHECK_OK(cu.cuEventDestroy_v2(e));
    CHECK_OK(cu.cuMemFree_v2(p));
    CHECK_OK(cu.cuCtxSynchronize());
}

int main(void)
{
    t_isolate();
    t_load_cuda();
    t_init_ctx();
    t_load_kernels(&k);
    capture_and_launch();
    by_hand();
    capture_refusals();
    printf("ok\n");
    return 0;
}
