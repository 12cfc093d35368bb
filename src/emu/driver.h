/* driver.h — process-local state of the emulated driver (libcuda.so.1) and the helpers its
 * entry points share. Only the prototypes of cuda_types.h are exported (the visibility push
 * below); everything else in the library is hidden. */
#ifndef CONVGPU_EMU_DRIVER_H
#define CONVGPU_EMU_DRIVER_H

#pragma GCC visibility push(default)
#include "cuda_types.h"
#pragma GCC visibility pop

#include "config.h"
#include "shared.h"

#include <pthread.h>
#include <stdint.h>

/* Handles the process owns besides contexts and device pointers. */
enum emu_kind {
    EMU_K_STREAM = 1, EMU_K_EVENT, EMU_K_MODULE, EMU_K_ARRAY, EMU_K_POOL, EMU_K_VMM, EMU_K_HOST,
    EMU_K_MIPMAP, EMU_K_GRAPH, EMU_K_GEXEC
};

/* Every such handle begins with this header and sits on one list, which is how handles are
 * validated (a pointer not on the list is not a handle) and how a destroyed context finds
 * what it owned. */
typedef struct emu_obj {
    struct emu_obj *next, *prev;
    int kind;
    struct CUctx_st *ctx;   /* owning context; NULL = owned by the process */
} emu_obj;

/* cuCtxGetLimit / cuCtxSetLimit: the limits a context keeps (CU_LIMIT_STACK_SIZE ..
 * CU_LIMIT_CIG_SHMEM_FALLBACK_ENABLED). */
#define EMU_CTX_LIMITS 10

struct CUctx_st {
    int alive;              /* atomic: other threads read it without the lock */
    int primary;
    unsigned ordinal;       /* visible ordinal (CUdevice) */
    unsigned phys;          /* physical device in the shared state */
    unsigned flags;
    unsigned refs;          /* primary context retain count */
    size_t limits[EMU_CTX_LIMITS];
    /* the scheduler's (workq.c) */
    unsigned gen;           /* bumped at each teardown: per-thread streams belong to one life */
    int sticky;             /* atomic CUresult: a fault in its work ended the context */
    struct CUstream_st *legacy; /* its NULL stream: made once, kept with the context */
    uint64_t scan, min_blocking, legacy_head; /* scratch of the worker's pick */
};

/* Device ranges, and the page-locked host ranges a kernel or an asynchronous copy may use
 * directly (with unified addressing a host pointer is its own device pointer). */
enum emu_alloc_kind {
    EMU_A_LINEAR, EMU_A_PITCH, EMU_A_MANAGED, EMU_A_POOL, EMU_A_VMM, EMU_A_HOST, EMU_A_HOSTREG
};

/* One device-pointer range. A device pointer is the host address of its backing mapping, so
 * copies are plain memcpy once the range is validated. */
typedef struct {
    uintptr_t base;
    size_t size;            /* bytes the caller may touch */
    size_t maplen;          /* bytes mapped (page multiple); 0 for VMM (the mapping owns it) */
    uint64_t charge;        /* bytes charged for this range (pool: counted in the pool; VMM: 0) */
    unsigned phys;
    int kind;
    int prot;               /* VMM: access granted by cuMemSetAccess (PROT_*) */
    struct CUctx_st *ctx;
    struct CUmemPoolHandle_st *pool;
    struct emu_vmm *vmm;
    unsigned hflags;        /* host ranges: the cuMemHostAlloc / cuMemHostRegister flags */
    unsigned long long id;  /* CU_POINTER_ATTRIBUTE_BUFFER_ID: unique in the process */
} emu_alloc;

typedef struct {
    uintptr_t base;
    size_t size;
} emu_range_t;

typedef struct {
    pthread_rwlock_t lock;  /* tables below; copies hold it shared so a buffer cannot vanish */
    pthread_mutex_t init_lock;
    int initialized;        /* atomic */
    CUresult init_rc;
    int forked;             /* atomic: set in the child by pthread_atfork */
    emu_config cfg;
    emu_shared sh;
    unsigned nvis;
    unsigned vis[EMU_MAX_DEVICES];          /* visible ordinal -> physical index */
    unsigned char uuid[EMU_MAX_DEVICES][16];/* by physical index */

    struct CUctx_st **ctxs; /* every context ever created: destroyed ones stay as tombstones */
    size_t nctx, capctx;
    struct CUctx_st primary[EMU_MAX_DEVICES];   /* by visible ordinal */
    unsigned ctx_live[EMU_MAX_DEVICES];         /* live contexts by physical index */

    emu_alloc *allocs;      /* sorted by base */
    size_t nalloc, capalloc;
    emu_range_t *resv;      /* VMM address reservations */
    size_t nresv, capresv;
    emu_obj objs;           /* list sentinel */
    struct CUmemPoolHandle_st *default_pool[EMU_MAX_DEVICES];   /* by physical index */
    struct CUmemPoolHandle_st *current_pool[EMU_MAX_DEVICES];   /* cuDeviceSetMemPool; NULL:
                                                                    the default one */
    unsigned long long next_id;                                 /* buffer and stream ids */
} emu_proc;

extern emu_proc g_emu;

/* Every entry point that needs an initialised driver starts with this: it finishes a fork
 * (the child re-registers as its own process) and returns cuInit's outcome, or
 * CUDA_ERROR_NOT_INITIALIZED before cuInit. */
CUresult emu_enter(void);

static inline void emu_rdlock(void) { pthread_rwlock_rdlock(&g_emu.lock); }
static inline void emu_wrlock(void) { pthread_rwlock_wrlock(&g_emu.lock); }
static inline void emu_unlock(void) { pthread_rwlock_unlock(&g_emu.lock); }

/* devices and contexts (device.c, context.c) */
CUresult emu_device(CUdevice dev, unsigned *phys);
CUresult emu_current(struct CUctx_st **ctx);
/* emu_enter() then emu_current(): the opening of every entry point that works in a context. */
CUresult emu_enter_current(struct CUctx_st **ctx);
int emu_ctx_valid(const struct CUctx_st *ctx);
void emu_ctx_tls_reset(void);
/* The calling thread's current context without the sticky-error check (context management,
 * which works in a faulted context too). */
CUresult emu_current_any(struct CUctx_st **ctx);

/* handle list (objects.c) */
void emu_obj_add(emu_obj *o, int kind, struct CUctx_st *ctx);
void emu_obj_del(emu_obj *o);
emu_obj *emu_obj_find(const void *p, int kind);
/* Frees everything ctx owns (all of the process's when ctx is NULL and all is set); with
 * uncharge = 0 the device charges are left alone (a forked child's inherited objects). */
void emu_release_owned(struct CUctx_st *ctx, int all, int uncharge);

/* device pointer table (memory.c) */
emu_alloc *emu_alloc_find(uintptr_t addr);
int emu_alloc_insert(const emu_alloc *a);
void emu_alloc_remove(emu_alloc *a);
/* The last range whose base is <= addr (it may end before addr), or NULL. */
emu_alloc *emu_alloc_floor(uintptr_t addr);
/* Validates [addr, addr+n) as memory a kernel or copy may read (write = 0) or write: device
 * memory, or page-locked host memory. */
CUresult emu_range(uintptr_t addr, size_t n, int write);
/* Anonymous lazily backed memory for a device range; NULL on failure. */
void *emu_map_backing(size_t len);
/* Releases one linear, pitch or managed range (unmap, uncharge, remove). */
void emu_free_linear(emu_alloc *a, int uncharge);

/* pools (pool.c) and VMM (vmm.c) */
void emu_pool_free_alloc(emu_alloc *a, int uncharge);
void emu_pool_destroy_obj(emu_obj *o, int uncharge);
void emu_vmm_destroy_obj(emu_obj *o, int uncharge);
void emu_vmm_forget_mapping(emu_alloc *a, int uncharge);
void emu_vmm_forget_reservations(void);

/* checkpointing (checkpoint.c and its helpers in pool.c, vmm.c, array.c): objects on
 * physical device d move to map[d] (0xff: stays); VMM bytes go to host memory and back. */
void emu_pool_remap(const uint8_t map[EMU_MAX_DEVICES]);
void emu_vmm_remap(const uint8_t map[EMU_MAX_DEVICES]);
void emu_array_remap(const uint8_t map[EMU_MAX_DEVICES]);
int emu_vmm_checkpoint(void);
int emu_vmm_restore(void);
/* Started by cuInit (and again in a forked child): the thread that answers checkpoint
 * requests; emu_enter() blocks the calling thread while the process is locked. */
void emu_ckpt_start(void);
void emu_ckpt_forked(void);
void emu_ckpt_gate(void);
extern int g_emu_ckpt_locked;

/* the other owned objects' destructors */
void emu_stream_destroy_obj(emu_obj *o);
void emu_event_destroy_obj(emu_obj *o);
void emu_module_destroy_obj(emu_obj *o);
void emu_array_destroy_obj(emu_obj *o, int uncharge);
void emu_free_host(emu_alloc *a);
void emu_graph_destroy_obj(emu_obj *o);
void emu_gexec_destroy_obj(emu_obj *o);

static inline uint64_t emu_charge_of(uint64_t bytes) { return emu_round_up(bytes, g_emu.cfg.granularity); }

#endif
