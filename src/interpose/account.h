/* account.h — charging this process's slot: the fast path (a CAS on our own ledger word) and,
 * when the quota is short, one request to the daemon, which may suspend this thread.
 * Every charge is rounded up to the ledger's granularity: the driver takes at least that. */
#ifndef CONVGPU_IP_ACCOUNT_H
#define CONVGPU_IP_ACCOUNT_H

#include <stdbool.h>
#include <stdint.h>

#include "client.h"

/* Member m's account (client.h: a container on several GPUs has one per GPU; 0 otherwise).
 * Charges `bytes` (rounded up); *charged = what was charged (0 for 0 bytes). 0, or -1 when the
 * container is over its limit on that GPU, the daemon stayed unreachable, or m is
 * CG_MEMBER_NONE: the caller answers CUDA_ERROR_OUT_OF_MEMORY. */
int cg_charge_on(unsigned m, uint64_t bytes, uint64_t *charged);
/* Returns a charge (a value cg_charge_on produced for m, or a sum/difference of such). Never
 * blocks. */
void cg_uncharge_on(unsigned m, uint64_t charged);
/* The member a new allocation of the calling thread goes to (cg_member), after making sure the
 * container's GPUs are known (opens member 0's session when it is not open yet:
 * CG_MEMBER_UNREACHABLE when the daemon stayed unreachable, which cg_charge_on refuses at
 * once). */
unsigned cg_alloc_member(void);
/* The member on CUDA device ordinal `dev` (a VMM or pool location, a context's device). */
unsigned cg_member_of_ordinal(int dev);
/* `bytes` rounded up to the charge granularity (0 on overflow). Never blocks. */
uint64_t cg_charge_size(uint64_t bytes);

/* Memory information for member m: total = its limit, free = limit - use (clamped). False
 * when there is no session (daemon never reached): the caller keeps the driver's numbers. */
bool cg_meminfo_on(unsigned m, uint64_t *free_bytes, uint64_t *total_bytes);

/* True once this process's context charge is in member m's account (the daemon adds it to the
 * first grant, and it stays until the process exits). Opens no session. */
bool cg_context_charged_on(unsigned m);

/* The member on the node's device `index` (NVML's numbering), or CG_MEMBER_NONE when the
 * container does not have that device; in a container on one GPU before any session, 0 (the
 * caller then finds no session and keeps the driver's numbers). */
unsigned cg_member_of_node_device(unsigned index);

/* After the daemon granted memory the driver may still be short for a moment (a killed
 * process's memory is freed asynchronously): pause before retrying; false when out of tries. */
bool cg_driver_retry(int *attempt);

#endif
