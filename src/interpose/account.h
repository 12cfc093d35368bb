/* account.h — charging this process's slot: the fast path (a CAS on our own ledger word) and,
 * when the quota is short, one request to the daemon, which may suspend this thread.
 * Every charge is rounded up to the ledger's granularity: the driver takes at least that. */
#ifndef CONVGPU_IP_ACCOUNT_H
#define CONVGPU_IP_ACCOUNT_H

#include <stdbool.h>
#include <stdint.h>

/* Charges `bytes` (rounded up); *charged = what was charged (0 for 0 bytes). 0, or -1 when the
 * container is over its limit or the daemon stayed unreachable: the caller answers
 * CUDA_ERROR_OUT_OF_MEMORY. */
int cg_charge(uint64_t bytes, uint64_t *charged);
/* Returns a charge (a value cg_charge produced, or a sum/difference of such). Never blocks. */
void cg_uncharge(uint64_t charged);
/* `bytes` rounded up to the charge granularity (0 on overflow). Never blocks. */
uint64_t cg_charge_size(uint64_t bytes);

/* Memory information for the container: total = limit, free = limit - use (clamped). False
 * when there is no session (daemon never reached): the caller keeps the driver's numbers. */
bool cg_meminfo(uint64_t *free_bytes, uint64_t *total_bytes);

/* True once this process's context charge is in its account (the daemon adds it to the first
 * grant, and it stays until the process exits). Opens no session. */
bool cg_context_charged(void);

/* The node's device index the container lives on, or -1 without a session. */
int cg_container_device(void);

/* After the daemon granted memory the driver may still be short for a moment (a killed
 * process's memory is freed asynchronously): pause before retrying; false when out of tries. */
bool cg_driver_retry(int *attempt);

#endif
