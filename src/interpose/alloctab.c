/* alloctab.c — an open-addressing hash table (linear probing, backward-shift deletion) behind
 * one mutex that is held only for O(1) work. Storage comes from mmap, not malloc: the table
 * must not depend on, or be counted against, the host program's allocator, and the fork child
 * can drop it with munmap. */
#include "alloctab.h"
#include "log.h"

#include <pthread.h>
#include <string.h>
#include <sys/mman.h>

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static struct cg_alloc *tab;
static uint64_t cap;   /* power of two, or 0 */
static uint64_t count;

static uint64_t slot_of(uint32_t space, uint64_t key, uint64_t c)
{
    uint64_t h = (key ^ (uint64_t)space << 59) * 0x9e3779b97f4a7c15ull;
    h ^= h >> 29;
    return h & (c - 1);
}

static void insert_raw(struct cg_alloc *t, uint64_t c, const struct cg_alloc *e)
{
    uint64_t i = slot_of(e->space, e->key, c);
    while (t[i].space)
        i = (i + 1) & (c - 1);
    t[i] = *e;
}

static int grow(void)
{
    uint64_t nc = cap ? cap * 2 : 1024;
    void *m = mmap(NULL, nc * sizeof *tab, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                   -1, 0);
    if (m == MAP_FAILED)
        return -1;
    struct cg_alloc *nt = m;
    for (uint64_t i = 0; i < cap; i++)
        if (tab[i].space)
            insert_raw(nt, nc, &tab[i]);
    if (tab)
        munmap(tab, cap * sizeof *tab);
    tab = nt;
    cap = nc;
    return 0;
}

static int put(const struct cg_alloc *ep)
{
    struct cg_alloc e = *ep;
    uint32_t space = e.space;
    uint64_t key = e.key;
    pthread_mutex_lock(&mu);
    if ((count + 1) * 2 > cap && grow() < 0) {
        pthread_mutex_unlock(&mu);
        cg_log(CG_LOG_ERROR, "cannot grow the allocation table");
        return -1;
    }
    /* A stale entry for a key the driver reuses (freed behind our back) is replaced. */
    uint64_t i = slot_of(space, key, cap);
    while (tab[i].space && !(tab[i].space == space && tab[i].key == key))
        i = (i + 1) & (cap - 1);
    if (!tab[i].space)
        count++;
    tab[i] = e;
    pthread_mutex_unlock(&mu);
    return 0;
}

int cg_alloc_put(uint32_t space, uint64_t key, uint64_t bytes, void *pool, unsigned member)
{
    return put(&(struct cg_alloc){.key = key, .bytes = bytes, .pool = pool, .space = space,
                                  .member = member});
}

int cg_alloc_put_swap(uint64_t key, uint64_t bytes, uint64_t swap)
{
    return put(&(struct cg_alloc){.key = key, .bytes = bytes, .swap = swap,
                                  .space = CG_SPACE_PTR});
}

void cg_alloc_put_back(const struct cg_alloc *a)
{
    (void)put(a); /* the take made room; one that cannot be made is logged by put */
}

bool cg_alloc_take(uint32_t space, uint64_t key, struct cg_alloc *out)
{
    pthread_mutex_lock(&mu);
    if (!cap) {
        pthread_mutex_unlock(&mu);
        return false;
    }
    uint64_t i = slot_of(space, key, cap);
    while (tab[i].space && !(tab[i].space == space && tab[i].key == key))
        i = (i + 1) & (cap - 1);
    if (!tab[i].space) {
        pthread_mutex_unlock(&mu);
        return false;
    }
    *out = tab[i];
    /* Backward-shift deletion keeps every probe chain unbroken without tombstones. */
    uint64_t hole = i, j = i;
    for (;;) {
        j = (j + 1) & (cap - 1);
        if (!tab[j].space)
            break;
        uint64_t home = slot_of(tab[j].space, tab[j].key, cap);
        if (((j - home) & (cap - 1)) >= ((j - hole) & (cap - 1))) {
            tab[hole] = tab[j];
            hole = j;
        }
    }
    memset(&tab[hole], 0, sizeof tab[hole]);
    count--;
    pthread_mutex_unlock(&mu);
    return true;
}

uint64_t cg_alloc_count(void)
{
    pthread_mutex_lock(&mu);
    uint64_t n = count;
    pthread_mutex_unlock(&mu);
    return n;
}

void cg_alloc_fork_prepare(void)
{
    pthread_mutex_lock(&mu);
}

void cg_alloc_fork_parent(void)
{
    pthread_mutex_unlock(&mu);
}

/* The parent's allocations are charged to the parent's slot: the child starts empty. */
void cg_alloc_fork_child(void)
{
    if (tab)
        munmap(tab, cap * sizeof *tab);
    tab = NULL;
    cap = count = 0;
    pthread_mutex_unlock(&mu);
}
