/* proc_start.c — a process's start time and real uid from /proc (see proc_start.h). */
#include "proc_start.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

uint64_t cg_proc_start_time(pid_t pid)
{
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return 0;
    buf[n] = '\0';
    /* The command name (field 2) may hold spaces and parentheses: start after the last ')'. */
    char *p = strrchr(buf, ')');
    if (!p || p[1] != ' ')
        return 0;
    p += 2;
    if (*p == 'Z' || *p == 'X')
        return 0;
    for (int field = 3; field < 22; field++) {
        p = strchr(p, ' ');
        if (!p)
            return 0;
        p++;
    }
    unsigned long long t = 0;
    if (sscanf(p, "%llu", &t) != 1)
        return 0;
    return t ? (uint64_t)t : 1;
}

bool cg_proc_real_uid(pid_t pid, uid_t *uid)
{
    char path[64], buf[2048];
    snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
    int fd = pid > 0 ? open(path, O_RDONLY | O_CLOEXEC) : -1;
    if (fd < 0)
        return false;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return false;
    buf[n] = '\0';
    const char *p = strstr(buf, "\nUid:");
    unsigned long v;
    if (!p || sscanf(p + 5, "%lu", &v) != 1)
        return false;
    *uid = (uid_t)v;
    return true;
}
