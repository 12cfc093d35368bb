/* rundir.h — the runtime directory, checked once and then used only through descriptors
 * (rundir.c says why and what lives there). */
#ifndef CONVGPUD_RUNDIR_H
#define CONVGPUD_RUNDIR_H

#include <limits.h>
#include <stddef.h>

struct rundir {
    char path[PATH_MAX];   /* resolved: no symbolic link left in it */
    int fd;                /* the directory */
    int containers_fd;     /* DIR/containers (0711) */
    int records_fd;        /* DIR/records (0700) */
};

/* Creates what is missing, refuses (with a message naming the culprit) a directory or ancestor
 * that another user could change, and opens DIR, DIR/containers and DIR/records. 0 or -1. */
int rundir_open(const char *path, struct rundir *out, char *err, size_t errlen);
void rundir_close(struct rundir *r);
/* Removes parent/name, a file or a directory tree, without following any link in it. */
int rundir_remove(int parent, const char *name);

#endif
