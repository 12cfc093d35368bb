/* graph.c — graphs built by hand or by capture (graph.h), instantiated and launched. Kernel
 * nodes copy their argument values when they are created, as the driver does, so a graph runs
 * the same kernels every launch. cuGraphLaunch queues one item: the stream's worker runs the
 * graph's items in dependency order, each kernel taking its turn on the device like any other
 * (a graph gets no more of the device than the same kernels launched one by one). Graph memory
 * nodes, child graphs, event nodes, conditional nodes and graph updates are not emulated. */
#include "graph.h"
#include "module.h"

#include <stdlib.h>
#include <string.h>

struct CUgraph_st *emu_graph_new(void) { return calloc(1, sizeof(struct CUgraph_st)); }

void emu_graph_free(struct CUgraph_st *g)
{
    for (size_t i = 0; i < g->n; i++) {
        free(g->nodes[i]->deps);
        free(g->nodes[i]);
    }
    free(g->nodes);
    free(g);
}

struct CUgraphNode_st *emu_graph_add(struct CUgraph_st *g, CUgraphNodeType type,
                                     const emu_item *it, struct CUgraphNode_st *const *deps,
                                     size_t ndeps)
{
    if (g->n == g->cap) {
        size_t cap = g->cap ? g->cap * 2 : 16;
        struct CUgraphNode_st **n = realloc(g->nodes, cap * sizeof *n);
        if (!n)
            return NULL;
        g->nodes = n;
        g->cap = cap;
    }
    struct CUgraphNode_st *node = calloc(1, sizeof *node);
    if (!node || (ndeps && !(node->deps = malloc(ndeps * sizeof *node->deps)))) {
        free(node);
        return NULL;
    }
    node->graph = g;
    node->type = type;
    if (it)
        node->item = *it;
    node->ndeps = ndeps;
    for (size_t i = 0; i < ndeps; i++)
        node->deps[i] = deps[i];
    g->nodes[g->n++] = node;
    return node;
}

void emu_graph_destroy_obj(emu_obj *o)
{
    emu_obj_del(o);
    emu_graph_free((struct CUgraph_st *)o);
}

static struct CUgraph_st *graph_lookup(CUgraph h)
{
    return (struct CUgraph_st *)emu_obj_find(h, EMU_K_GRAPH);
}

/* The node a handle names, in any graph of the process, or NULL. Lock held. */
static struct CUgraphNode_st *node_lookup(CUgraphNode h)
{
    if (!h)
        return NULL;
    for (emu_obj *o = g_emu.objs.next; o != &g_emu.objs; o = o->next) {
        if (o->kind != EMU_K_GRAPH)
            continue;
        struct CUgraph_st *g = (struct CUgraph_st *)o;
        for (size_t i = 0; i < g->n; i++)
            if (g->nodes[i] == h)
                return h;
    }
    return NULL;
}

CUresult cuGraphCreate(CUgraph *phGraph, unsigned int flags)
{
    CUresult rc = emu_enter();
    if (rc != CUDA_SUCCESS)
        return rc;
    if (!phGraph || flags != 0)
        return CUDA_ERROR_INVALID_VALUE;
    struct CUgraph_st *g = emu_graph_new();
    if (!g)
        return CUDA_ERROR_OUT_OF_MEMORY;
    emu_wrlock();
    emu_obj_add(&g->hdr, EMU_K_GRAPH, NULL);
    emu_unlock();
    *phGraph = g;
    return CUDA_SUCCESS;
}

CUresult cuGraphDestroy(CUgraph hGraph)
{
    CUresult rc = emu_enter();
    if (rc != CUDA_SUCCESS)
        return rc;
    emu_wrlock();
    struct CUgraph_st *g = graph_lookup(hGraph);
    if (g)
        emu_graph_destroy_obj(&g->hdr);
    emu_unlock();
    return g ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

/* Checks a dependency list against g: every entry a node of g, none twice. Lock held. */
static CUresult check_deps(const struct CUgraph_st *g, const CUgraphNode *deps, size_t n)
{
    if (n > 0 && !deps)
        return CUDA_ERROR_INVALID_VALUE;
    for (size_t i = 0; i < n; i++) {
        if (!deps[i] || deps[i]->graph != g || node_lookup(deps[i]) != deps[i])
            return CUDA_ERROR_INVALID_VALUE;
        for (size_t j = 0; j < i; j++)
            if (deps[j] == deps[i])
                return CUDA_ERROR_INVALID_VALUE;
    }
    return CUDA_SUCCESS;
}

static CUresult add_kernel_node(CUgraphNode *out, CUgraph hGraph, const CUgraphNode *deps,
                                size_t ndeps, const CUDA_KERNEL_NODE_PARAMS *p)
{
    CUresult rc = emu_enter();
    if (rc != CUDA_SUCCESS)
        return rc;
    if (!out || !p)
        return CUDA_ERROR_INVALID_VALUE;
    if (!p->func)
        return p->kern ? CUDA_ERROR_NOT_SUPPORTED /* library kernels are not emulated */
                       : CUDA_ERROR_INVALID_VALUE;
    emu_item it = {.kind = EMU_I_KERNEL};
    emu_wrlock();
    struct CUgraph_st *g = graph_lookup(hGraph);
    int k = emu_resolve_function(p->func);
    if (!g)
        rc = CUDA_ERROR_INVALID_VALUE;
    else if (k < 0)
        rc = CUDA_ERROR_INVALID_HANDLE;
    else if ((rc = check_deps(g, deps, ndeps)) == CUDA_SUCCESS &&
             (rc = emu_check_dims(p->gridDimX, p->gridDimY, p->gridDimZ, p->blockDimX,
                                  p->blockDimY, p->blockDimZ, p->sharedMemBytes)) ==
                 CUDA_SUCCESS)
        rc = emu_read_args(k, p->kernelParams, p->extra, &it.u.k);
    struct CUgraphNode_st *node = NULL;
    if (rc == CUDA_SUCCESS &&
        !(node = emu_graph_add(g, CU_GRAPH_NODE_TYPE_KERNEL, &it, deps, ndeps)))
        rc = CUDA_ERROR_OUT_OF_MEMORY;
    if (node) {
        unsigned dims[7] = {p->gridDimX,  p->gridDimY,  p->gridDimZ,     p->blockDimX,
                            p->blockDimY, p->blockDimZ, p->sharedMemBytes};
        memcpy(node->item.u.k.dims, dims, sizeof dims);
        node->item.u.k.func = p->func;
        node->argv[0] = it.u.k.a0;
        node->argv[1] = it.u.k.a1;
        node->argp[0] = &node->argv[0];
        node->argp[1] = &node->argv[1];
        *out = node;
    }
    emu_unlock();
    return rc;
}

CUresult cuGraphAddKernelNode_v2(CUgraphNode *phGraphNode, CUgraph hGraph,
                                 const CUgraphNode *dependencies, size_t numDependencies,
                                 const CUDA_KERNEL_NODE_PARAMS *nodeParams)
{
    return add_kernel_node(phGraphNode, hGraph, dependencies, numDependencies, nodeParams);
}

/* Before CUDA 12 the parameters had no kern/ctx members. */
CUresult cuGraphAddKernelNode(CUgraphNode *phGraphNode, CUgraph hGraph,
                              const CUgraphNode *dependencies, size_t numDependencies,
                              const CUDA_KERNEL_NODE_PARAMS_v1 *p)
{
    if (!p)
        return add_kernel_node(phGraphNode, hGraph, dependencies, numDependencies, NULL);
    CUDA_KERNEL_NODE_PARAMS v2 = {p->func,       p->gridDimX,  p->gridDimY,     p->gridDimZ,
                                  p->blockDimX,  p->blockDimY, p->blockDimZ,    p->sharedMemBytes,
                                  p->kernelParams, p->extra,   NULL,            NULL};
    return add_kernel_node(phGraphNode, hGraph, dependencies, numDependencies, &v2);
}

CUresult cuGraphAddEmptyNode(CUgraphNode *phGraphNode, CUgraph hGraph,
                             const CUgraphNode *dependencies, size_t numDependencies)
{
    CUresult rc = emu_enter();
    if (rc != CUDA_SUCCESS)
        return rc;
    if (!phGraphNode)
        return CUDA_ERROR_INVALID_VALUE;
    emu_wrlock();
    struct CUgraph_st *g = graph_lookup(hGraph);
    struct CUgraphNode_st *node = NULL;
    if (!g)
        rc = CUDA_ERROR_INVALID_VALUE;
    else if ((rc = check_deps(g, dependencies, numDependencies)) == CUDA_SUCCESS &&
             !(node = emu_graph_add(g, CU_GRAPH_NODE_TYPE_EMPTY, NULL, dependencies,
                                    numDependencies)))
        rc = CUDA_ERROR_OUT_OF_MEMORY;
    if (node)
        *phGraphNode = node;
    emu_unlock();
    return rc;
}

CUresult cuGraphKernelNodeGetParams_v2(CUgraphNode hNode, CUDA_KERNEL_NODE_PARAMS *p)
{
    CUresult rc = emu_enter();
    if (rc != CUDA_SUCCESS)
        return rc;
    if (!p)
        return CUDA_ERROR_INVALID_VALUE;
    emu_rdlock();
    struct CUgraphNode_st *n = node_lookup(hNode);
    if (!n || n->type != CU_GRAPH_NODE_TYPE_KERNEL) {
        rc = CUDA_ERROR_INVALID_VALUE;
    } else {
        const emu_kcall *kc = &n->item.u.k;
        memset(p, 0, sizeof *p);
        p->func = kc->func;
        p->gridDimX = kc->dims[0];
        p->gridDimY = kc->dims[1];
        p->gridDimZ = kc->dims[2];
        p->blockDimX = kc->dims[3];
        p->blockDimY = kc->dims[4];
        p->blockDimZ = kc->dims[5];
        p->sharedMemBytes = kc->dims[6];
        p->kernelParams = n->argp;
    }
    emu_unlock();
    return rc;
}

CUresult cuGraphNodeGetType(CUgraphNode hNode, CUgraphNodeType *type)
{
    CUresult rc = emu_enter();
    if (rc != CUDA_SUCCESS)
        return rc;
    if (!type)
        return CUDA_ERROR_INVALID_VALUE;
    emu_rdlock();
    struct CUgraphNode_st *n = node_lookup(hNode);
    if (n)
        *type = n->type;
    emu_unlock();
    return n ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUresult cuGraphGetNodes(CUgraph hGraph, CUgraphNode *nodes, size_t *numNodes)
{
    CUresult rc = emu_enter();
    if (rc != CUDA_SUCCESS)
        return rc;
    if (!numNodes)
        return CUDA_ERROR_INVALID_VALUE;
    emu_rdlock();
    struct CUgraph_st *g = graph_lookup(hGraph);
    if (!g) {
        rc = CUDA_ERROR_INVALID_VALUE;
    } else if (nodes) {
        /* As the driver: the first *numNodes nodes, the rest of a longer array NULL, and the
         * count of nodes written (never more than the graph has). */
        size_t want = *numNodes;
        for (size_t i = 0; i < want; i++)
            nodes[i] = i < g->n ? g->nodes[i] : NULL;
        *numNodes = want < g->n ? want : g->n;
    } else {
        *numNodes = g->n;
    }
    emu_unlock();
    return rc;
}

/* ---- executable graphs ------------------------------------------------------------------- */

/* The runnable items of g in dependency order (Kahn's algorithm, in node order among the
 * ready ones). Lock held. */
static CUresult instantiate(struct CUgraph_st *g, struct CUgraphExec_st **out)
{
    struct CUgraphExec_st *x = calloc(1, sizeof *x);
    size_t *missing = calloc(g->n ? g->n : 1, sizeof *missing);
    char *done = calloc(g->n ? g->n : 1, 1);
    if (!x || !missing || !done || (g->n && !(x->items = calloc(g->n, sizeof *x->items)))) {
        free(x);
        free(missing);
        free(done);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    for (size_t i = 0; i < g->n; i++)
        missing[i] = g->nodes[i]->ndeps;
    size_t placed = 0;
    for (int progress = 1; progress;) {
        progress = 0;
        for (size_t i = 0; i < g->n; i++) {
            if (done[i] || missing[i])
                continue;
            struct CUgraphNode_st *n = g->nodes[i];
            done[i] = 1;
            placed++;
            progress = 1;
            if (n->type != CU_GRAPH_NODE_TYPE_EMPTY)
                x->items[x->n++] = n->item;
            for (size_t j = 0; j < g->n; j++)
                for (size_t d = 0; d < g->nodes[j]->ndeps; d++)
                    if (g->nodes[j]->deps[d] == n)
                        missing[j]--;
        }
    }
    free(missing);
    free(done);
    if (placed != g->n) { /* a cycle: cannot happen, dependencies must exist when added */
        free(x->items);
        free(x);
        return CUDA_ERROR_INVALID_VALUE;
    }
    x->refs = 1;
    *out = x;
    return CUDA_SUCCESS;
}

#define EMU_INSTANTIATE_FLAGS                                                                  \
    (CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH | CUDA_GRAPH_INSTANTIATE_FLAG_USE_NODE_PRIORITY)

CUresult cuGraphInstantiateWithFlags(CUgraphExec *phGraphExec, CUgraph hGraph,
                                     unsigned long long flags)
{
    CUresult rc = emu_enter();
    if (rc != CUDA_SUCCESS)
        return rc;
    if (!phGraphExec || (flags & ~(unsigned long long)(EMU_INSTANTIATE_FLAGS |
                                                       CUDA_GRAPH_INSTANTIATE_FLAG_DEVICE_LAUNCH)))
        return CUDA_ERROR_INVALID_VALUE; /* UPLOAD belongs to cuGraphInstantiateWithParams */
    if (flags & CUDA_GRAPH_INSTANTIATE_FLAG_DEVICE_LAUNCH)
        return CUDA_ERROR_NOT_SUPPORTED; /* no device-side launches on the emulator */
    struct CUgraphExec_st *x = NULL;
    emu_wrlock();
    struct CUgraph_st *g = graph_lookup(hGraph);
    rc = g ? instantiate(g, &x) : CUDA_ERROR_INVALID_VALUE;
    if (x)
        emu_obj_add(&x->hdr, EMU_K_GEXEC, NULL);
    emu_unlock();
    if (x)
        *phGraphExec = x;
    return rc;
}

/* The CUDA 10/11 forms: errors would be reported through a node and a log, which stay empty. */
CUresult cuGraphInstantiate_v2(CUgraphExec *phGraphExec, CUgraph hGraph, CUgraphNode *phErrorNode,
                               char *logBuffer, size_t bufferSize)
{
    if (phErrorNode)
        *phErrorNode = NULL;
    if (logBuffer && bufferSize > 0)
        logBuffer[0] = '\0';
    return cuGraphInstantiateWithFlags(phGraphExec, hGraph, 0);
}

CUresult cuGraphInstantiate(CUgraphExec *phGraphExec, CUgraph hGraph, CUgraphNode *phErrorNode,
                            char *logBuffer, size_t bufferSize)
{
    return cuGraphInstantiate_v2(phGraphExec, hGraph, phErrorNode, logBuffer, bufferSize);
}

void emu_gexec_unref(struct CUgraphExec_st *x)
{
    if (--x->refs > 0)
        return;
    free(x->items);
    free(x);
}

void emu_gexec_destroy_obj(emu_obj *o)
{
    emu_obj_del(o);
    emu_sched_lock();
    emu_gexec_unref((struct CUgraphExec_st *)o); /* launches in flight keep it */
    emu_sched_unlock();
}

CUresult cuGraphExecDestroy(CUgraphExec hGraphExec)
{
    CUresult rc = emu_enter();
    if (rc != CUDA_SUCCESS)
        return rc;
    emu_wrlock();
    emu_obj *o = emu_obj_find(hGraphExec, EMU_K_GEXEC);
    if (o)
        emu_gexec_destroy_obj(o);
    emu_unlock();
    return o ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

static CUresult graph_launch(CUgraphExec hGraphExec, CUstream h, int ptsz)
{
    struct CUstream_st *s;
    CUresult rc = emu_enter();
    if (rc != CUDA_SUCCESS)
        return rc;
    emu_rdlock();
    struct CUgraphExec_st *x = (struct CUgraphExec_st *)emu_obj_find(hGraphExec, EMU_K_GEXEC);
    if (!x) {
        emu_unlock();
        return CUDA_ERROR_INVALID_VALUE;
    }
    if ((rc = emu_stream_get_locked(h, ptsz, &s)) != CUDA_SUCCESS) {
        emu_unlock();
        return rc;
    }
    emu_sched_lock();
    x->refs++; /* the queued launch's */
    emu_sched_unlock();
    emu_unlock();
    emu_item it = {.kind = EMU_I_GRAPH, .u.graph = {x}};
    rc = emu_submit(s, &it, 0);
    emu_sched_lock();
    if (rc != CUDA_SUCCESS)
        emu_gexec_unref(x); /* not queued */
    emu_stream_unref(s);
    emu_sched_unlock();
    return rc;
}

CUresult cuGraphLaunch(CUgraphExec hGraphExec, CUstream hStream)
{
    return graph_launch(hGraphExec, hStream, 0);
}

CUresult cuGraphLaunch_ptsz(CUgraphExec hGraphExec, CUstream hStream)
{
    return graph_launch(hGraphExec, hStream, 1);
}

CUresult emu_gexec_run(struct CUstream_st *s, struct CUgraphExec_st *x, int *holds)
{
    for (size_t i = 0; i < x->n; i++) {
        emu_item *it = &x->items[i];
        if (*holds && emu_item_runs_on_host(it)) {
            emu_shared_exec_release(&g_emu.sh, s->phys);
            *holds = 0;
        }
        CUresult rc = emu_exec_item(s, it, holds);
        if (rc != CUDA_SUCCESS)
            return rc; /* a fault ends the graph and the context */
    }
    return CUDA_SUCCESS;
}
