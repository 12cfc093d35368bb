/* proc.c — finding the processes the daemon knows, and telling a live process from a reused
 * pid. Lookups over the model only: the watchdog and the compute measurement (which map NVML's
 * pids) and the containers (which check owners) use them without reaching into the container
 * sockets' code (client.c). */
#include <errno.h>
#include <signal.h>

#include "daemon.h"
#include "proc_start.h"

bool proc_alive(pid_t pid, uint64_t start)
{
    if (pid <= 0 || start == 0 || (kill(pid, 0) != 0 && errno == ESRCH))
        return false;
    /* 0: /proc unreadable (gone, or another pid namespace); a different start: the pid was
     * reused by another process. */
    return cg_proc_start_time(pid) == start;
}

struct proc *proc_by_pid(struct daemon *d, pid_t pid)
{
    for (struct container *c = d->containers; c; c = c->next)
        for (struct proc *p = c->procs; p; p = p->next)
            if (p->welcomed && p->pid == pid)
                return p;
    return NULL;
}
