/* sim_exec.h — what the simulator's contract tests share: running the convgpu-sim executable
 * with arguments (its stdout captured, its stderr's size measured) in a directory of the run's
 * own, and counting failed expectations. Header-only, static: each test is one source file. */
#ifndef CONVGPU_TEST_SIM_EXEC_H
#define CONVGPU_TEST_SIM_EXEC_H

#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>

static int failures;
static const char *exe;
/* This run's own files: two runs of the suite at once (two checkouts, or CI beside a developer)
 * must not read each other's. */
static char dir[64];

static void expect(int cond, const char *what)
{
    if (!cond) {
        fprintf(stderr, "FAIL %s\n", what);
        failures++;
    }
}

/* Runs exe with args; returns its exit status, fills out (stdout) and *errlen (stderr's size). */
static int run(const char *args, char *out, size_t cap, long *errlen)
{
    char cmd[1024], errpath[128];
    snprintf(errpath, sizeof errpath, "%s/err", dir);
    snprintf(cmd, sizeof cmd, "%s %s 2>%s", exe, args, errpath);
    FILE *p = popen(cmd, "r");
    if (!p)
        return -1;
    size_t n = fread(out, 1, cap - 1, p);
    out[n] = 0;
    int st = pclose(p);
    FILE *e = fopen(errpath, "r");
    *errlen = 0;
    if (e) {
        fseek(e, 0, SEEK_END);
        *errlen = ftell(e);
        fclose(e);
    }
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* argv[1] is the executable; makes the directory. 0, or 2 (usage) / 1 (no directory). */
static int sim_exec_start(int argc, char **argv, const char *name)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s PATH-TO-convgpu-sim\n", name);
        return 2;
    }
    exe = argv[1];
    snprintf(dir, sizeof dir, "/tmp/convgpu-%s.XXXXXX", name);
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    return 0;
}

/* Removes the directory; returns the test's exit status. */
static int sim_exec_end(const char *passed)
{
    char rm[128];
    snprintf(rm, sizeof rm, "rm -rf '%s'", dir);
    if (system(rm) != 0)
        fprintf(stderr, "warning: could not remove %s\n", dir);
    if (failures)
        return 1;
    printf("%s\n", passed);
    return 0;
}

#endif
