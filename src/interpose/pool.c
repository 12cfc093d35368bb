/* pool.c — per-pool accounts for pools charged by reserved memory (see pool.h). A handful of
 * pools per process is normal, so a small fixed array under one mutex does; a pool beyond it is
 * simply charged per allocation. The mutex is never held across a charge that may wait. */
#include "pool.h"
#include "account.h"
#include "hooks.h"
#include "log.h"

#include <pthread.h>
#include <string.h>

#define MAX_POOLS 64
enum { MODE_RESERVE = 1, MODE_PER_ALLOC = 2 };

struct account {
    void *pool;
    uint64_t charged; /* bytes charged to our slot on this pool's behalf */
    int mode;
    unsigned member;  /* the container's GPU it is charged to: its device's (client.h) */
};

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static struct account pools[MAX_POOLS];

/* Private declaration: cuDeviceGetMemPool (CUDA 11.2) is not in cuda_types.h. */
typedef CUresult (*get_mem_pool_fn)(CUmemoryPool *pool, CUdevice dev);

static _Atomic(void *) c_get_device, c_get_pool, c_get_default_pool, c_get_attr;

void *cg_pool_current(void)
{
    PFN_cuCtxGetDevice gd = (PFN_cuCtxGetDevice)cg_lib_sym(CG_LIB_CUDA, &c_get_device,
                                                           "cuCtxGetDevice");
    CUdevice dev;
    if (!gd || gd(&dev) != CUDA_SUCCESS)
        return NULL;
    CUmemoryPool p = NULL;
    get_mem_pool_fn cur = (get_mem_pool_fn)cg_lib_sym(CG_LIB_CUDA, &c_get_pool,
                                                      "cuDeviceGetMemPool");
    if (cur && cur(&p, dev) == CUDA_SUCCESS && p)
        return p;
    PFN_cuDeviceGetDefaultMemPool def = (PFN_cuDeviceGetDefaultMemPool)cg_lib_sym(
        CG_LIB_CUDA, &c_get_default_pool, "cuDeviceGetDefaultMemPool");
    if (def && def(&p, dev) == CUDA_SUCCESS)
        return p;
    return NULL;
}

static bool reserved_of(void *pool, uint64_t *out)
{
    PFN_cuMemPoolGetAttribute f = (PFN_cuMemPoolGetAttribute)cg_lib_sym(
        CG_LIB_CUDA, &c_get_attr, "cuMemPoolGetAttribute");
    cuuint64_t v = 0;
    if (!f || f((CUmemoryPool)pool, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT, &v) != CUDA_SUCCESS)
        return false;
    *out = v;
    return true;
}

static int find(void *pool)
{
    for (int i = 0; i < MAX_POOLS; i++)
        if (pools[i].pool == pool)
            return i;
    return -1;
}

bool cg_pool_by_reserve(void *pool)
{
    pthread_mutex_lock(&mu);
    int i = find(pool);
    if (i < 0) {
        uint64_t r;
        int mode = reserved_of(pool, &r) ? MODE_RESERVE : MODE_PER_ALLOC;
        i = find(NULL);
        if (i < 0) {
            pthread_mutex_unlock(&mu);
            return false;
        }
        pools[i] = (struct account){.pool = pool, .charged = 0, .mode = mode,
                                    .member = cg_member()};
        cg_log(CG_LOG_DEBUG, "pool %p charged %s", pool,
               mode == MODE_RESERVE ? "by reserved memory" : "per allocation");
    }
    bool r = pools[i].mode == MODE_RESERVE;
    pthread_mutex_unlock(&mu);
    return r;
}

int cg_pool_settle(void *pool, unsigned m, uint64_t extra)
{
    if (!pool)
        return 0;
    pthread_mutex_lock(&mu);
    int i = find(pool);
    if (i < 0 || pools[i].mode != MODE_RESERVE || (extra && pools[i].member != m)) {
        pthread_mutex_unlock(&mu);
        cg_uncharge_on(m, extra);
        return 0;
    }
    m = pools[i].member;
    pools[i].charged += extra;
    for (;;) {
        uint64_t reserved;
        if (!reserved_of(pool, &reserved)) {
            pthread_mutex_unlock(&mu);
            return 0;
        }
        uint64_t want = cg_charge_size(reserved), have = pools[i].charged;
        if (want <= have) {
            pools[i].charged = want;
            pthread_mutex_unlock(&mu);
            cg_uncharge_on(m, have - want);
            return 0;
        }
        /* The pool grew by more than we reserved: charge the rest without holding the lock. */
        pthread_mutex_unlock(&mu);
        uint64_t more;
        if (cg_charge_on(m, want - have, &more) < 0)
            return -1;
        pthread_mutex_lock(&mu);
        i = find(pool);
        if (i < 0) { /* destroyed meanwhile */
            pthread_mutex_unlock(&mu);
            cg_uncharge_on(m, more);
            return 0;
        }
        pools[i].charged += more;
    }
}

void cg_pool_shrink_all(void)
{
    uint64_t give[MAX_POOLS] = {0};
    unsigned member[MAX_POOLS] = {0};
    pthread_mutex_lock(&mu);
    for (int i = 0; i < MAX_POOLS; i++) {
        uint64_t reserved;
        if (!pools[i].pool || pools[i].mode != MODE_RESERVE || !reserved_of(pools[i].pool, &reserved))
            continue;
        uint64_t want = cg_charge_size(reserved);
        if (want < pools[i].charged) {
            give[i] = pools[i].charged - want;
            member[i] = pools[i].member;
            pools[i].charged = want;
        }
    }
    pthread_mutex_unlock(&mu);
    for (int i = 0; i < MAX_POOLS; i++)
        cg_uncharge_on(member[i], give[i]);
}

void cg_pool_forget(void *pool)
{
    pthread_mutex_lock(&mu);
    int i = find(pool);
    uint64_t give = 0;
    unsigned m = 0;
    if (i >= 0) {
        give = pools[i].charged;
        m = pools[i].member;
        memset(&pools[i], 0, sizeof pools[i]);
    }
    pthread_mutex_unlock(&mu);
    cg_uncharge_on(m, give);
}

void cg_pool_fork_prepare(void)
{
    pthread_mutex_lock(&mu);
}

void cg_pool_fork_parent(void)
{
    pthread_mutex_unlock(&mu);
}

void cg_pool_fork_child(void)
{
    memset(pools, 0, sizeof pools);
    pthread_mutex_unlock(&mu);
}
