/* test_checkpoint.c — the process checkpoint API across real processes, as cuda-checkpoint
 * uses it: this process (the requester) locks, checkpoints, restores and unlocks a child that
 * holds linear, VMM and stream-ordered memory filled with a pattern.
 *   - states and their errors: each call in a wrong state is CUDA_ERROR_ILLEGAL_STATE and
 *     changes nothing; an unknown pid and non-zero reserved fields are CUDA_ERROR_INVALID_VALUE;
 *   - lock blocks the child's next driver call until unlock (its thread is seen asleep, and
 *     its answer arrives only after unlock);
 *   - checkpoint releases everything: NVML lists the child nowhere, the device is empty;
 *   - restore onto a device of another model is refused (CUDA_ERROR_NOT_SUPPORTED); onto a
 *     full device it is CUDA_ERROR_OUT_OF_MEMORY and the child stays checkpointed;
 *   - restore onto the other device of the same model (a GPU pair) moves it there: NVML shows
 *     it on device 1 with the same bytes charged, and after unlock the child finds every byte
 *     as it was and runs a kernel on it.
 * Devices: 1GiB, 1GiB (same model), 2GiB; context 66MiB, granule 2MiB. */
#include "emu_test.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#define LINEAR (64 * T_MiB)
#define VMM    (32 * T_MiB)
#define POOLED (16 * T_MiB)
#define CHILD_USED (66 * T_MiB + LINEAR + VMM + POOLED)

static int to_child[2], from_child[2];
static pid_t child;

static void send_byte(int fd, char c) { CHECK(write(fd, &c, 1) == 1); }

static char recv_byte(int fd)
{
    char c = 0;
    CHECK(read(fd, &c, 1) == 1);
    return c;
}

static void fill(unsigned char *p, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (unsigned char)((i * 2654435761u) >> 13 ^ seed);
}

static int same(CUdeviceptr d, size_t n, unsigned seed, int inverted)
{
    unsigned char *want = malloc(n), *got = malloc(n);
    CHECK(want && got);
    fill(want, n, seed);
    if (inverted)
        for (size_t i = 0; i < n; i++)
            want[i] = (unsigned char)~want[i];
    CHECK_OK(cu.cuMemcpyDtoH_v2(got, d, n));
    int ok = memcmp(want, got, n) == 0;
    free(want);
    free(got);
    return ok;
}

static void put(CUdeviceptr d, size_t n, unsigned seed)
{
    unsigned char *b = malloc(n);
    CHECK(b);
    fill(b, n, seed);
    CHECK_OK(cu.cuMemcpyHtoD_v2(d, b, n));
    free(b);
}

/* The child: memory of three kinds with patterns; then answers the parent's commands. */
static void child_main(void)
{
    /* A failed parent leaves no child locked forever behind it. */
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    /* As in a container: it sees one device (a move puts it on a device it did not see). */
    setenv("CUDA_VISIBLE_DEVICES", "0", 1);
    t_load_cuda();
    t_init_ctx();
    CUdeviceptr lin, vmm, pooled;
    CHECK_OK(cu.cuMemAlloc_v2(&lin, LINEAR));
    CUmemAllocationProp prop;
    memset(&prop, 0, sizeof prop);
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    CUmemGenericAllocationHandle h;
    CHECK_OK(cu.cuMemCreate(&h, VMM, &prop, 0));
    CHECK_OK(cu.cuMemAddressReserve(&vmm, VMM, 0, 0, 0));
    CHECK_OK(cu.cuMemMap(vmm, VMM, 0, h, 0));
    CUmemAccessDesc acc = {{CU_MEM_LOCATION_TYPE_DEVICE, 0}, CU_MEM_ACCESS_FLAGS_PROT_READWRITE};
    CHECK_OK(cu.cuMemSetAccess(vmm, VMM, &acc, 1));
    CUstream s;
    CHECK_OK(cu.cuStreamCreate(&s, 0));
    CHECK_OK(cu.cuMemAllocAsync(&pooled, POOLED, s));
    CHECK_OK(cu.cuStreamSynchronize(s));
    put(lin, LINEAR, 1);
    put(vmm, VMM, 2);
    put(pooled, POOLED, 3);
    send_byte(from_child[1], 'r');
    for (;;) {
        char c = recv_byte(to_child[0]);
        if (c == 'c') {
            send_byte(from_child[1], 'c');
            size_t fr, tot;
            CHECK_OK(cu.cuMemGetInfo_v2(&fr, &tot));
            send_byte(from_child[1], 'd');
        } else if (c == 'v') {
            CHECK(same(lin, LINEAR, 1, 0));
            CHECK(same(vmm, VMM, 2, 0));
            CHECK(same(pooled, POOLED, 3, 0));
            /* The device works after the move: a kernel over the restored bytes. */
            t_kernels k;
            t_load_kernels(&k);
            t_complement(&k, s, lin, LINEAR);
            CHECK_OK(cu.cuStreamSynchronize(s));
            CHECK(same(lin, LINEAR, 1, 1));
            exit(0);
        }
    }
}

static int main_thread_asleep(void *arg)
{
    (void)arg;
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/%d/task/%d/stat", (int)child, (int)child);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return 0;
    buf[n] = '\0';
    const char *p = strrchr(buf, ')');
    return p && p[1] == ' ' && p[2] == 'S';
}

static int readable(int fd)
{
    struct pollfd p = {.fd = fd, .events = POLLIN};
    return poll(&p, 1, 0) == 1;
}

static CUprocessState state(void)
{
    CUprocessState st = CU_PROCESS_STATE_FAILED;
    CHECK_OK(cu.cuCheckpointProcessGetState(child, &st));
    return st;
}

static int hog_holds(void *arg)
{
    return t_nvml_proc_used(1, *(pid_t *)arg) > 0;
}

static void uuid_of(unsigned idx, CUuuid *u)
{
    CUdevice d;
    CHECK_OK(cu.cuDeviceGet(&d, (int)idx));
    CHECK_OK(cu.cuDeviceGetUuid_v2(u, d));
}

int main(void)
{
    t_isolate();
    CHECK(pipe(to_child) == 0 && pipe(from_child) == 0);
    child = fork();
    CHECK(child >= 0);
    if (child == 0)
        child_main();
    CHECK_EQ(recv_byte(from_child[0]), 'r');
    t_load_cuda();
    t_load_nvml();
    CHECK_NVML(nv.nvmlInit_v2(), NVML_SUCCESS);
    CHECK_EQ(t_nvml_proc_used(0, child), CHILD_USED);

    /* Before cuInit the requester cannot ask. */
    CUprocessState st;
    CHECK_CU(cu.cuCheckpointProcessGetState(child, &st), CUDA_ERROR_NOT_INITIALIZED);
    CHECK_OK(cu.cuInit(0));
    CHECK_EQ(state(), CU_PROCESS_STATE_RUNNING);
    int tid = 0;
    CHECK_OK(cu.cuCheckpointProcessGetRestoreThreadId(child, &tid));
    char task[64];
    snprintf(task, sizeof task, "/proc/%d/task/%d", (int)child, tid);
    CHECK(tid > 0 && tid != child && access(task, F_OK) == 0);

    /* Bad arguments and wrong states change nothing. */
    CHECK_CU(cu.cuCheckpointProcessGetState(child, NULL), CUDA_ERROR_INVALID_VALUE);
    CHECK_CU(cu.cuCheckpointProcessGetState(0x7ffffff0, &st), CUDA_ERROR_INVALID_VALUE);
    CHECK_CU(cu.cuCheckpointProcessLock(getpid() == 1 ? 2 : 1, NULL), CUDA_ERROR_INVALID_VALUE);
    CUcheckpointLockArgs bad_lock = {.timeoutMs = 0, .reserved0 = 1};
    CHECK_CU(cu.cuCheckpointProcessLock(child, &bad_lock), CUDA_ERROR_INVALID_VALUE);
    CHECK_CU(cu.cuCheckpointProcessCheckpoint(child, NULL), CUDA_ERROR_ILLEGAL_STATE);
    CHECK_CU(cu.cuCheckpointProcessRestore(child, NULL), CUDA_ERROR_ILLEGAL_STATE);
    CHECK_CU(cu.cuCheckpointProcessUnlock(child, NULL), CUDA_ERROR_ILLEGAL_STATE);
    CHECK_EQ(state(), CU_PROCESS_STATE_RUNNING);

    /* Lock: the child's next call blocks. */
    CUcheckpointLockArgs lock = {.timeoutMs = 60000};
    CHECK_OK(cu.cuCheckpointProcessLock(child, &lock));
    CHECK_EQ(state(), CU_PROCESS_STATE_LOCKED);
    CHECK_CU(cu.cuCheckpointProcessLock(child, NULL), CUDA_ERROR_ILLEGAL_STATE);
    CHECK_CU(cu.cuCheckpointProcessRestore(child, NULL), CUDA_ERROR_ILLEGAL_STATE);
    send_byte(to_child[1], 'c');
    CHECK_EQ(recv_byte(from_child[0]), 'c');
    CHECK(t_wait_for(main_thread_asleep, NULL, T_WAIT_MS));
    CHECK(!readable(from_child[0]));

    /* Checkpoint: the child holds nothing on any device. */
    CHECK_OK(cu.cuCheckpointProcessCheckpoint(child, NULL));
    CHECK_EQ(state(), CU_PROCESS_STATE_CHECKPOINTED);
    CHECK_EQ(t_nvml_proc_used(0, child), 0);
    CHECK_EQ(t_nvml_used(0), 0);
    CHECK_CU(cu.cuCheckpointProcessCheckpoint(child, NULL), CUDA_ERROR_ILLEGAL_STATE);
    CHECK_CU(cu.cuCheckpointProcessUnlock(child, NULL), CUDA_ERROR_ILLEGAL_STATE);
    CHECK(!readable(from_child[0]));

    /* Restore: another model is refused; a full device is out of memory. */
    CUcheckpointGpuPair pair;
    uuid_of(0, &pair.oldUuid);
    uuid_of(2, &pair.newUuid);
    CUcheckpointRestoreArgs ra;
    memset(&ra, 0, sizeof ra);
    ra.gpuPairs = &pair;
    ra.gpuPairsCount = 1;
    CHECK_CU(cu.cuCheckpointProcessRestore(child, &ra), CUDA_ERROR_NOT_SUPPORTED);
    uuid_of(1, &pair.newUuid);
    char *hog[] = {(char *)t_sample(), "--size", "900MiB", "--hold", "--quiet", NULL};
    const char *hog_env[] = {"CUDA_VISIBLE_DEVICES=1", NULL};
    int hog_fd;
    pid_t hog_pid = t_spawn(hog, hog_env, &hog_fd);
    CHECK(t_wait_for(hog_holds, &hog_pid, T_WAIT_MS));
    CHECK_CU(cu.cuCheckpointProcessRestore(child, &ra), CUDA_ERROR_OUT_OF_MEMORY);
    CHECK_EQ(state(), CU_PROCESS_STATE_CHECKPOINTED);
    kill(hog_pid, SIGTERM);
    CHECK_EQ(t_wait(hog_pid), -SIGTERM);
    free(t_read_all(hog_fd));

    /* Restore onto device 1 (same model): all of it is there, nothing on device 0. */
    CHECK_OK(cu.cuCheckpointProcessRestore(child, &ra));
    CHECK_EQ(state(), CU_PROCESS_STATE_LOCKED);
    CHECK_EQ(t_nvml_proc_used(1, child), CHILD_USED);
    CHECK_EQ(t_nvml_proc_used(0, child), 0);
    CHECK(!readable(from_child[0]));

    /* Unlock: the blocked call returns; every byte is as it was; a kernel runs. */
    CHECK_OK(cu.cuCheckpointProcessUnlock(child, NULL));
    CHECK_EQ(state(), CU_PROCESS_STATE_RUNNING);
    CHECK_EQ(recv_byte(from_child[0]), 'd');
    send_byte(to_child[1], 'v');
    int status = 0;
    CHECK(waitpid(child, &status, 0) == child);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    CHECK_EQ(t_nvml_used(1), 0);
    CHECK_NVML(nv.nvmlShutdown(), NVML_SUCCESS);
    printf("ok\n");
    return 0;
}
