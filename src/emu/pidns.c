/* pidns.c — pids across pid namespaces (see pidns.h). The scan of /proc costs a few hundred
 * system calls, so answers are cached: a found pid is re-checked by its start time (one read),
 * a process not found is looked for again at most once a second. The cache also remembers the
 * pid a process had when last seen alive: its samples outlive it. */
#include "pidns.h"

#include <ctype.h>
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "proc_start.h"

/* PROC_PID_INIT_INO: the initial pid namespace, whose /proc shows every process. */
#define EMU_INIT_PIDNS   0xEFFFFFFCull
#define EMU_PIDNS_CACHE  64
#define EMU_RESCAN_NS    1000000000ull

typedef struct {
    uint64_t ns, start, checked;
    int32_t nspid;
    pid_t vpid;                            /* 0: not found when last looked for */
    pid_t known;                           /* the pid it had when last seen alive */
} cache_ent;

static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static uint64_t g_self_ns;
static pid_t g_self_for;                    /* the pid g_self_ns was read for (fork changes it) */
static cache_ent g_cache[EMU_PIDNS_CACHE];
static unsigned g_next;

static uint64_t ns_inode(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0 ? (uint64_t)sb.st_ino : 0;
}

uint64_t emu_pidns_self(void)
{
    pid_t me = getpid();
    pthread_mutex_lock(&g_mu);
    if (g_self_for != me) {
        g_self_ns = ns_inode("/proc/self/ns/pid");
        g_self_for = me;
    }
    uint64_t ns = g_self_ns;
    pthread_mutex_unlock(&g_mu);
    return ns;
}

void emu_pidns_forget(void)
{
    pthread_mutex_init(&g_mu, NULL); /* the forking thread may not be the one that held it */
    g_self_for = 0;
    memset(g_cache, 0, sizeof g_cache);
}

__attribute__((constructor)) static void emu_pidns_load(void)
{
    pthread_atfork(NULL, NULL, emu_pidns_forget);
}

int emu_ident_self(emu_ident *id)
{
    memset(id, 0, sizeof *id);
    id->pid = (int32_t)getpid();
    id->pidns = emu_pidns_self();
    id->start_time = cg_proc_start_time(getpid());
    return id->start_time ? 0 : -1;
}

/* The last number of the NSpid line of /proc/<dir>/status: the pid in its own namespace. */
static int32_t innermost_pid(const char *dir)
{
    char path[64], buf[4096];
    snprintf(path, sizeof path, "/proc/%.16s/status", dir);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return 0;
    buf[n] = '\0';
    char *line = strstr(buf, "\nNSpid:");
    if (!line)
        return 0;
    long last = 0;
    for (char *p = line + 7; *p && *p != '\n';) {
        if (isdigit((unsigned char)*p))
            last = strtol(p, &p, 10);
        else
            p++;
    }
    return last > 0 && last <= INT32_MAX ? (int32_t)last : 0;
}

static pid_t scan(const emu_ident *id)
{
    DIR *d = opendir("/proc");
    if (!d)
        return 0;
    pid_t found = 0;
    struct dirent *e;
    while (!found && (e = readdir(d)) != NULL) {
        if (!isdigit((unsigned char)e->d_name[0]) || strlen(e->d_name) > 10)
            continue;
        char path[64];
        snprintf(path, sizeof path, "/proc/%.16s/ns/pid", e->d_name);
        if (ns_inode(path) != id->pidns || innermost_pid(e->d_name) != id->pid)
            continue;
        pid_t p = (pid_t)atoi(e->d_name);
        if (cg_proc_start_time(p) == id->start_time)
            found = p;
    }
    closedir(d);
    return found;
}

pid_t emu_ident_visible_pid(const emu_ident *id)
{
    if (id->pid <= 0)
        return 0;
    uint64_t self = emu_pidns_self();
    if (id->pidns == self || id->pidns == 0 || self == 0)
        return cg_proc_start_time(id->pid) == id->start_time ? id->pid : 0;
    uint64_t now = emu_now_ns();
    pthread_mutex_lock(&g_mu);
    cache_ent *c = NULL;
    for (unsigned i = 0; i < EMU_PIDNS_CACHE; i++)
        if (g_cache[i].ns == id->pidns && g_cache[i].nspid == id->pid &&
            g_cache[i].start == id->start_time)
            c = &g_cache[i];
    pid_t v = 0;
    if (c && c->vpid && cg_proc_start_time(c->vpid) == id->start_time) {
        v = c->vpid;
    } else if (!c || c->vpid || now - c->checked >= EMU_RESCAN_NS) {
        v = scan(id);
        pid_t known = c ? c->known : 0;
        if (!c)
            c = &g_cache[g_next++ % EMU_PIDNS_CACHE];
        *c = (cache_ent){id->pidns, id->start_time, now, id->pid, v, v ? v : known};
    }
    pthread_mutex_unlock(&g_mu);
    return v;
}

/* The pid a process had when this process last saw it alive, or 0. */
static pid_t last_known(const emu_ident *id)
{
    pid_t k = 0;
    pthread_mutex_lock(&g_mu);
    for (unsigned i = 0; i < EMU_PIDNS_CACHE; i++)
        if (g_cache[i].ns == id->pidns && g_cache[i].nspid == id->pid &&
            g_cache[i].start == id->start_time)
            k = g_cache[i].known;
    pthread_mutex_unlock(&g_mu);
    return k;
}

int emu_ident_alive(const emu_ident *id)
{
    uint64_t self = emu_pidns_self();
    if (id->pidns == self || id->pidns == 0 || self == 0)
        return cg_proc_start_time(id->pid) == id->start_time;
    if (emu_ident_visible_pid(id))
        return 1;
    return self != EMU_INIT_PIDNS;
}

unsigned emu_ident_report_pid(const emu_ident *id)
{
    pid_t v = emu_ident_visible_pid(id);
    if (!v)
        v = last_known(id); /* gone since: its samples still name the pid it had */
    return (unsigned)(v ? v : id->pid);
}
