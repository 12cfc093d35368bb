/* graph.h — CUDA graphs as the emulator keeps them: a graph is a list of nodes, each the item
 * it will queue (a kernel with its argument values, a copy, a set, a host function, or nothing)
 * and the nodes it depends on; an executable graph is those items in an order that respects
 * every dependency, run one after another by the stream's worker as a single queued item. */
#ifndef CONVGPU_EMU_GRAPH_H
#define CONVGPU_EMU_GRAPH_H

#include "workq.h"

struct CUgraphNode_st {
    struct CUgraph_st *graph;
    CUgraphNodeType type;
    emu_item item;               /* what it runs; unused for an empty node */
    uint64_t argv[2];            /* kernel nodes: the argument values, copied at creation */
    void *argp[2];               /* pointers to them (the node's kernelParams) */
    size_t ndeps;
    struct CUgraphNode_st **deps;
};

struct CUgraph_st {
    emu_obj hdr;                 /* on the handle list once it is the caller's */
    struct CUgraphNode_st **nodes;
    size_t n, cap;
};

struct CUgraphExec_st {
    emu_obj hdr;
    unsigned refs;               /* handle + launches in flight (scheduler lock) */
    emu_item *items;             /* in dependency order */
    size_t n;
};

/* A graph not yet on the handle list; NULL when out of memory. */
struct CUgraph_st *emu_graph_new(void);
void emu_graph_free(struct CUgraph_st *g);
/* Appends a node running it (NULL: an empty node) after deps. NULL when out of memory. */
struct CUgraphNode_st *emu_graph_add(struct CUgraph_st *g, CUgraphNodeType type,
                                     const emu_item *it, struct CUgraphNode_st *const *deps,
                                     size_t ndeps);

#endif
