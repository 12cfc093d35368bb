/* test_topology_file.c — the topology file's parser (common/topology_file.c): a DGX-like file
 * read as NVML would report it, nested groups taking the nearest, and every kind of bad line
 * refused with its number, leaving the output untouched. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "topology_file.h"

static const char dgx[] =
    "# DGX-like\n"
    "nvlink 0 1 2   # two links\n"
    "nvlink 2 3\r\n"
    "nvlink 4 5\n"
    "nvlink 6 7\n"
    "\n"
    "switch 0 1 2 3\n"
    "switch 4 5 6 7\n"
    "socket 0 1 2 3\n"
    "\tsocket 4 5 6 7\n";

static cg_topo t;

static void test_good(void)
{
    char err[256];
    CHECK(cg_topo_parse(dgx, strlen(dgx), &t, err, sizeof err) == 0, "dgx: %s", err);
    CHECK(t.ngpus == 8, "8 GPUs, got %u", t.ngpus);
    CHECK(t.nvlinks[0][1] == 2 && t.nvlinks[1][0] == 2 && t.nvlinks[2][3] == 1, "NVLink counts");
    CHECK(t.nvlinks[0][2] == 0 && cg_topo_links_of(&t, 0) == 2, "no NVLink 0-2");
    CHECK(t.path[0][1] == CG_TOPO_SINGLE && t.path[1][3] == CG_TOPO_SINGLE, "one switch");
    CHECK(t.path[0][4] == CG_TOPO_SYSTEM && t.path[7][3] == CG_TOPO_SYSTEM, "across sockets");
    CHECK(t.path[5][5] == 0, "no path to itself");

    static const char nested[] = "hostbridge 0 1 2 3\nswitch 0 1\nmultiswitch 0 1 2\n";
    CHECK(cg_topo_parse(nested, strlen(nested), &t, err, sizeof err) == 0, "nested: %s", err);
    CHECK(t.path[0][1] == CG_TOPO_SINGLE && t.path[1][2] == CG_TOPO_MULTIPLE &&
          t.path[2][3] == CG_TOPO_HOSTBRIDGE, "the nearest group wins, in any order");
    CHECK(cg_topo_parse("", 0, &t, err, sizeof err) == 0 && t.ngpus == 0, "empty: no GPUs");
}

static void test_bad(void)
{
    static const struct { const char *text, *want; } cases[] = {
        {"switch 0 1\nfoo 1 2\n", "line 2: unknown statement 'foo'"},
        {"nvlink 0 0\n", "line 1: GPU 0 cannot be NVLinked to itself"},
        {"nvlink 0\n", "line 1: nvlink takes two GPUs"},
        {"nvlink 0 1 19\n", "line 1: '19' is not a link count"},
        {"nvlink 0 1 0\n", "line 1: '0' is not a link count"},
        {"nvlink 0 1\nnvlink 1 0\n", "line 2: GPUs 1 and 0 are already NVLinked"},
        {"nvlink 0 1 10\nnvlink 0 2 9\n", "line 2: a GPU has more than 18 NVLinks"},
        {"\n\nswitch 0 64\n", "line 3: '64' is not a GPU index"},
        {"switch 0 -1\n", "line 1: '-1' is not a GPU index"},
        {"switch 0 01\n", "line 1: '01' is not a GPU index"},
        {"switch 0\n", "line 1: switch needs at least two GPUs"},
        {"socket 1 2 1\n", "line 1: GPU 1 is named twice"},
        {"switch 0 1\0\n", "line 1: a control character"},
        {"Switch 0 1\n", "line 1: unknown statement 'Switch'"},
    };
    memset(&t, 0xA5, sizeof t);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char err[256] = "";
        size_t len = strlen(cases[i].text);
        if (strcmp(cases[i].text, "switch 0 1") == 0)
            len = 12; /* the NUL and the newline */
        CHECK(cg_topo_parse(cases[i].text, len, &t, err, sizeof err) == -1 &&
              strncmp(err, cases[i].want, strlen(cases[i].want)) == 0,
              "case %zu: want '%s', got '%s'", i, cases[i].want, err);
    }
    CHECK(t.ngpus == 0xA5A5A5A5u, "refusals leave the output untouched");
}

static void test_load(void)
{
    char path[] = "/tmp/convgpu-topo-XXXXXX", err[512];
    int fd = mkstemp(path);
    CHECK(fd >= 0, "mkstemp");
    const char text[] = "switch 0 1\nswitch 1 x\n";
    CHECK(write(fd, text, sizeof text - 1) == (ssize_t)(sizeof text - 1), "write");
    close(fd);
    CHECK(cg_topo_load(path, &t, err, sizeof err) == -1, "bad file refused");
    char want[512];
    snprintf(want, sizeof want, "%s:2: 'x' is not a GPU index", path);
    CHECK(strncmp(err, want, strlen(want)) == 0, "names file and line: '%s'", err);
    unlink(path);
    CHECK(cg_topo_load(path, &t, err, sizeof err) == -1 && strstr(err, "No such file"),
          "missing file: %s", err);
    CHECK(cg_topo_load("/tmp", &t, err, sizeof err) == -1 && strstr(err, "not a regular file"),
          "a directory: %s", err);
}

int main(void)
{
    test_good();
    test_bad();
    test_load();
    return failures != 0;
}
