/* test_threads.c — many threads allocating, copying and freeing at once in one process: every
 * copy round-trips, and when all is freed the device is exactly as before. Also threads racing
 * for the last of the capacity: exactly the available granules are handed out. */
#include "emu_test.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define THREADS 8
#define ROUNDS  200

static CUcontext ctx;

static void *worker(void *arg)
{
    unsigned seed = (unsigned)(uintptr_t)arg;
    unsigned char out[4096], in[4096];
    CHECK_OK(cu.cuCtxSetCurrent(ctx));
    for (int r = 0; r < ROUNDS; r++) {
        size_t n = 1 + (size_t)(rand_r(&seed) % sizeof out);
        CUdeviceptr p;
        CHECK_OK(cu.cuMemAlloc_v2(&p, n + (size_t)(rand_r(&seed) % (3 * T_MiB))));
        for (size_t i = 0; i < n; i++)
            out[i] = (unsigned char)rand_r(&seed);
        CHECK_OK(cu.cuMemcpyHtoD_v2(p, out, n));
        CHECK_OK(cu.cuMemcpyDtoH_v2(in, p, n));
        CHECK(memcmp(in, out, n) == 0);
        CHECK_OK(cu.cuMemFree_v2(p));
    }
    return NULL;
}

static int granted;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;

static void *grabber(void *arg)
{
    (void)arg;
    CHECK_OK(cu.cuCtxSetCurrent(ctx));
    CUdeviceptr p;
    CUresult rc;
    while ((rc = cu.cuMemAlloc_v2(&p, 1)) == CUDA_SUCCESS) {
        pthread_mutex_lock(&mu);
        granted++;
        pthread_mutex_unlock(&mu);
    }
    CHECK_CU(rc, CUDA_ERROR_OUT_OF_MEMORY);
    return NULL;
}

int main(void)
{
    t_isolate();
    t_load_cuda();
    ctx = t_init_ctx();
    uint64_t before = t_free();
    pthread_t th[THREADS];
    for (uintptr_t i = 0; i < THREADS; i++)
        CHECK(pthread_create(&th[i], NULL, worker, (void *)(i + 1)) == 0);
    for (int i = 0; i < THREADS; i++)
        pthread_join(th[i], NULL);
    CHECK_EQ(t_free(), before);
    for (int i = 0; i < THREADS; i++)
        CHECK(pthread_create(&th[i], NULL, grabber, NULL) == 0);
    for (int i = 0; i < THREADS; i++)
        pthread_join(th[i], NULL);
    CHECK_EQ(granted, before / (2 * T_MiB));
    CHECK_EQ(t_free(), 0);
    printf("ok: %d granules granted\n", granted);
    return 0;
}
