/* swap_orders.h — what the swap probes share: giving their own process the daemon's swap orders
 * through the ledger (ledger.h's protocol, so a test can move a process out and in without a
 * daemon deciding it), waiting for the swap thread's report, and a probe's failure (die, OK). Header-only,
 * static: each probe is a single source file. */
#ifndef CONVGPU_TEST_SWAP_ORDERS_H
#define CONVGPU_TEST_SWAP_ORDERS_H

#include "cuda_types.h"
#include "ledger_map.h"

#include <linux/futex.h>
#include <stdatomic.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define DEADLINE_S 120 /* bounds a hang only */

static void die(const char *what)
{
    printf("FAIL [%d]: %s\n", (int)getpid(), what);
    fflush(stdout);
    _exit(1);
}

/* A driver call that must succeed. */
#define OK(call)                                                                        \
    do {                                                                                \
        CUresult r_ = (call);                                                           \
        if (r_ != CUDA_SUCCESS) {                                                       \
            printf("FAIL [%d]: %s -> %d (line %d)\n", (int)getpid(), #call, (int)r_,  \
                   __LINE__);                                                           \
            fflush(stdout);                                                             \
            _exit(1);                                                                   \
        }                                                                               \
    } while (0)

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + t.tv_nsec / 1e9;
}

static void nap(void) { nanosleep(&(struct timespec){0, 2000000}, NULL); }

static struct cg_ledger *ledger(void)
{
    struct cg_ledger *l = cg_test_find_ledger();
    if (!l)
        die("no ledger mapped: not under convgpu run?");
    return l;
}

static long slot_of(struct cg_ledger *l, pid_t pid)
{
    for (uint32_t i = 0; i < CG_LEDGER_SLOTS; i++)
        if (atomic_load(&l->slots[i].pid) == (uint32_t)pid)
            return i;
    return -1;
}

/* The orders, as ledger.h has the daemon give them. */
static void order(struct cg_ledger *l, uint32_t o)
{
    if (o == CG_SWAP_OUT)
        atomic_fetch_or(&l->compute.gate, CG_GATE_SWAPPED);
    atomic_store(&l->swap.order, o);
    atomic_fetch_add(&l->swap.epoch, 1);
    syscall(SYS_futex, (uint32_t *)&l->swap.epoch, FUTEX_WAKE, INT32_MAX, NULL, NULL, 0);
}

static void open_gate(struct cg_ledger *l)
{
    atomic_fetch_and(&l->compute.gate, ~CG_GATE_SWAPPED);
    syscall(SYS_futex, (uint32_t *)&l->compute.gate, FUTEX_WAKE, INT32_MAX, NULL, NULL, 0);
}

/* Waits until pid's swap thread reports `state` for the current order. */
static void wait_state(struct cg_ledger *l, pid_t pid, uint32_t state)
{
    double end = now_s() + DEADLINE_S;
    long s;
    while ((s = slot_of(l, pid)) < 0 || atomic_load(&l->swap_slots[s].state) != state ||
           atomic_load(&l->swap_slots[s].done) != atomic_load(&l->swap.epoch)) {
        if (now_s() > end)
            die("a process never reported the swap state ordered");
        nap();
    }
}

#endif
