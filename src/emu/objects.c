/* objects.c — the list of handles the process owns (streams, events, modules, arrays, pools,
 * VMM allocations, graphs), used to validate handles and to free what a destroyed context
 * owned. */
#include "driver.h"

void emu_obj_add(emu_obj *o, int kind, struct CUctx_st *ctx)
{
    o->kind = kind;
    o->ctx = ctx;
    o->next = g_emu.objs.next;
    o->prev = &g_emu.objs;
    g_emu.objs.next->prev = o;
    g_emu.objs.next = o;
}

void emu_obj_del(emu_obj *o)
{
    o->prev->next = o->next;
    o->next->prev = o->prev;
    o->next = o->prev = NULL;
}

emu_obj *emu_obj_find(const void *p, int kind)
{
    if (!p)
        return NULL;
    for (emu_obj *o = g_emu.objs.next; o != &g_emu.objs; o = o->next)
        if ((const void *)o == p)
            return o->kind == kind ? o : NULL;
    return NULL;
}

void emu_release_owned(struct CUctx_st *ctx, int all, int uncharge)
{
    /* Device ranges first (descending: removal shifts only later entries), then the handles
     * that own them. Pool and VMM memory belongs to the process, not to a context. */
    for (size_t i = g_emu.nalloc; i-- > 0;) {
        emu_alloc *a = &g_emu.allocs[i];
        switch (a->kind) {
        case EMU_A_POOL:
            if (all)
                emu_pool_free_alloc(a, uncharge);
            break;
        case EMU_A_VMM:
            if (all)
                emu_vmm_forget_mapping(a, uncharge);
            break;
        case EMU_A_HOST:
        case EMU_A_HOSTREG:
            if (all || a->ctx == ctx)
                emu_free_host(a);
            break;
        default:
            if (all || a->ctx == ctx)
                emu_free_linear(a, uncharge);
            break;
        }
    }
    emu_obj *next;
    for (emu_obj *o = g_emu.objs.next; o != &g_emu.objs; o = next) {
        next = o->next;
        if (!all && o->ctx != ctx)
            continue;
        switch (o->kind) {
        case EMU_K_STREAM: emu_stream_destroy_obj(o); break;
        case EMU_K_EVENT: emu_event_destroy_obj(o); break;
        case EMU_K_MODULE: emu_module_destroy_obj(o); break;
        case EMU_K_ARRAY:
        case EMU_K_MIPMAP: emu_array_destroy_obj(o, uncharge); break;
        case EMU_K_POOL: emu_pool_destroy_obj(o, uncharge); break;
        case EMU_K_VMM: emu_vmm_destroy_obj(o, uncharge); break;
        case EMU_K_GRAPH: emu_graph_destroy_obj(o); break;
        case EMU_K_GEXEC: emu_gexec_destroy_obj(o); break;
        default: break;
        }
    }
    if (all)
        emu_vmm_forget_reservations();
}
