/* test_request.c — the SPANK plugin's option checks (src/integrations/slurm/request.c): what
 * srun/sbatch accept for --gpu-mem, --gpu-compute and --gpu-count, what they refuse and what they
 * say, and
 * the container id of each kind of step. Needs no Slurm: it runs wherever the project builds. */
#include <stdio.h>
#include <string.h>

#include "request.h"

static int fails;

#define EXPECT(cond)                                                        \
    do {                                                                    \
        if (!(cond)) {                                                      \
            fprintf(stderr, "%s:%d: FAILED: %s\n", __FILE__, __LINE__, #cond); \
            fails++;                                                        \
        }                                                                   \
    } while (0)

static void gpu_mem(void)
{
    char err[256];
    uint64_t b = 7;
    EXPECT(slurm_parse_gpu_mem("1GiB", &b, err, sizeof err) == 0 && b == (1ull << 30));
    EXPECT(slurm_parse_gpu_mem("1.5GiB", &b, err, sizeof err) == 0 && b == (3ull << 29));
    EXPECT(slurm_parse_gpu_mem("4096", &b, err, sizeof err) == 0 && b == 4096);
    const char *bad[] = {"abc", "", "0", "0GiB", "-1GiB", "1x", "1.5B", "99999999999TiB", NULL};
    for (int i = 0; bad[i]; i++) {
        b = 7;
        err[0] = '\0';
        EXPECT(slurm_parse_gpu_mem(bad[i], &b, err, sizeof err) == -1);
        EXPECT(b == 7); /* untouched on refusal */
        EXPECT(strstr(err, "--gpu-mem=") != NULL);
    }
    EXPECT(slurm_parse_gpu_mem(NULL, &b, err, sizeof err) == -1);
}

static void gpu_compute(void)
{
    char err[256];
    unsigned p = 7;
    EXPECT(slurm_parse_gpu_compute("30", &p, err, sizeof err) == 0 && p == 30);
    EXPECT(slurm_parse_gpu_compute("100%", &p, err, sizeof err) == 0 && p == 100);
    EXPECT(slurm_parse_gpu_compute("1", &p, err, sizeof err) == 0 && p == 1);
    const char *bad[] = {"0", "101", "-5", "30.5", "abc", "", "+30", "30%%", NULL};
    for (int i = 0; bad[i]; i++) {
        p = 7;
        EXPECT(slurm_parse_gpu_compute(bad[i], &p, err, sizeof err) == -1);
        EXPECT(p == 7);
        EXPECT(strstr(err, "1 to 100") != NULL);
    }
}

static void gpu_count(void)
{
    char err[256];
    unsigned n = 7;
    EXPECT(slurm_parse_gpu_count("2", &n, err, sizeof err) == 0 && n == 2);
    EXPECT(slurm_parse_gpu_count("1", &n, err, sizeof err) == 0 && n == 1);
    EXPECT(slurm_parse_gpu_count("64", &n, err, sizeof err) == 0 && n == 64);
    EXPECT(slurm_parse_gpu_count("08", &n, err, sizeof err) == 0 && n == 8);
    const char *bad[] = {"0", "65", "-1", "+2", "2.0", "2x", " 2", "2 ", "", "two",
                         "4294967298", "0064", "1e1", NULL};
    for (int i = 0; bad[i]; i++) {
        n = 7;
        err[0] = '\0';
        EXPECT(slurm_parse_gpu_count(bad[i], &n, err, sizeof err) == -1);
        EXPECT(n == 7); /* untouched on refusal */
        /* The message names the option, the value as given and the range. */
        char want[80];
        snprintf(want, sizeof want, "--gpu-count=%s:", bad[i]);
        EXPECT(strstr(err, want) != NULL);
        EXPECT(strstr(err, "1 to 64") != NULL);
    }
    EXPECT(slurm_parse_gpu_count(NULL, &n, err, sizeof err) == -1 && n == 7);
}

static void combination(void)
{
    char err[256];
    struct slurm_gpu_request none = {0}, mem = {.bytes = 1}, both = {.bytes = 1, .compute_pct = 5},
                             share_only = {.compute_pct = 5};
    EXPECT(slurm_check_request(&none, err, sizeof err) == 0);
    EXPECT(slurm_check_request(&mem, err, sizeof err) == 0);
    EXPECT(slurm_check_request(&both, err, sizeof err) == 0);
    EXPECT(slurm_check_request(&share_only, err, sizeof err) == -1);
    EXPECT(strstr(err, "needs --gpu-mem") != NULL);
    struct slurm_gpu_request gang = {.bytes = 1, .gpus = 2},
                             gang_share = {.bytes = 1, .compute_pct = 5, .gpus = 4},
                             count_only = {.gpus = 2}, count_share = {.compute_pct = 5, .gpus = 2};
    EXPECT(slurm_check_request(&gang, err, sizeof err) == 0);
    EXPECT(slurm_check_request(&gang_share, err, sizeof err) == 0);
    err[0] = '\0';
    EXPECT(slurm_check_request(&count_only, err, sizeof err) == -1);
    EXPECT(strstr(err, "--gpu-count needs --gpu-mem") != NULL);
    EXPECT(slurm_check_request(&count_share, err, sizeof err) == -1);
    EXPECT(strstr(err, "needs --gpu-mem") != NULL);
}

static void ids(void)
{
    char id[64];
    slurm_step_container_id(12, 0, id, sizeof id);
    EXPECT(strcmp(id, "slurm-12.0") == 0);
    slurm_step_container_id(12, 0xfffffffbu, id, sizeof id);
    EXPECT(strcmp(id, "slurm-12.batch") == 0);
    slurm_step_container_id(12, 0xfffffffcu, id, sizeof id);
    EXPECT(strcmp(id, "slurm-12.extern") == 0);
    slurm_step_container_id(12, 0xfffffffau, id, sizeof id);
    EXPECT(strcmp(id, "slurm-12.interactive") == 0);
    /* The longest possible id still fits the daemon's 32 characters. */
    slurm_step_container_id(0xffffffffu, 0xfffffff0u, id, sizeof id);
    EXPECT(strlen(id) <= 32);
}

int main(void)
{
    gpu_mem();
    gpu_compute();
    gpu_count();
    combination();
    ids();
    if (fails)
        fprintf(stderr, "%d check(s) failed\n", fails);
    else
        printf("slurm.request: ok\n");
    return fails != 0;
}
