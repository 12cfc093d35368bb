/* exp_opts.c — the few options of the experiments that run an engine of their own
 * (coexec-table4, gsaas-partitions): their output is always CSV, so only where the SVG goes
 * and, for the randomised one, how many seeds and jobs. Anything else is refused with one line
 * on stderr and exit status 2, nothing on stdout, as the rest of `convgpu sim` does. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "sim.h"

static int refuse(const char *name, const char *what, const char *arg)
{
    fprintf(stderr, "convgpu sim: %s: %s: '%s' (see convgpu sim --help)\n", name, what,
            arg ? arg : "");
    return 2;
}

static bool count_arg(const char *s, unsigned hi, unsigned *out)
{
    char *end;
    errno = 0;
    unsigned long v = strtoul(s, &end, 10);
    if (errno || end == s || *end || *s == '-' || v < 1 || v > hi)
        return false;
    *out = (unsigned)v;
    return true;
}

int sim_exp_opts_parse(int argc, char **argv, const char *name, bool seeded, sim_exp_opts *o)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        bool takes = strcmp(a, "--svg") == 0 || strcmp(a, "--format") == 0 ||
                     (seeded && (strcmp(a, "--seeds") == 0 || strcmp(a, "--jobs") == 0));
        if (!takes)
            return refuse(name, "option not taken by this experiment", a);
        if (!v)
            return refuse(name, "option needs a value", a);
        i++;
        if (strcmp(a, "--svg") == 0)
            o->svg_dir = v;
        else if (strcmp(a, "--format") == 0 && strcmp(v, "csv") != 0)
            return refuse(name, "this experiment writes CSV only", v);
        else if (strcmp(a, "--seeds") == 0 && !count_arg(v, 10000, &o->seeds))
            return refuse(name, "bad seed count (1-10000)", v);
        else if (strcmp(a, "--jobs") == 0 && !count_arg(v, 100000, &o->jobs))
            return refuse(name, "bad job count (1-100000)", v);
    }
    return 0;
}

int sim_exp_svg_path(const char *dir, const char *file, char *path, size_t cap)
{
    if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
        fprintf(stderr, "convgpu sim: cannot create %s: %s\n", dir, strerror(errno));
        return -1;
    }
    if ((size_t)snprintf(path, cap, "%s/%s", dir, file) >= cap) {
        fprintf(stderr, "convgpu sim: path too long: %s/%s\n", dir, file);
        return -1;
    }
    return 0;
}
