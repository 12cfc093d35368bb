/* sockprobe.c — tries to connect to UNIX sockets, for the container isolation test: for each
 * PATH it tries a SOCK_STREAM (the control API) and a SOCK_SEQPACKET (a container socket)
 * connect and prints one line
 *     path=PATH stream=ok|ERRNO seqpacket=ok|ERRNO
 * (ERRNO as a name: ENOENT, EACCES, ECONNREFUSED, EPROTOTYPE, ...). A path is reachable when
 * either says ok. Exit status 0 when no path was reachable, 1 when one was, 2 usage. It only
 * needs libc, so it is copied into the test image with what ldd lists. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

static const char *errname(int e)
{
    switch (e) {
    case ENOENT: return "ENOENT";
    case EACCES: return "EACCES";
    case EPERM: return "EPERM";
    case ENOTDIR: return "ENOTDIR";
    case ECONNREFUSED: return "ECONNREFUSED";
    case EPROTOTYPE: return "EPROTOTYPE";
    case ENAMETOOLONG: return "ENAMETOOLONG";
    case ELOOP: return "ELOOP";
    default: return strerror(e);
    }
}

static int try(const char *path, int type, const char **why)
{
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    if (strlen(path) >= sizeof a.sun_path) {
        *why = "ENAMETOOLONG";
        return 0;
    }
    strcpy(a.sun_path, path);
    int s = socket(AF_UNIX, type | SOCK_CLOEXEC, 0);
    if (s < 0) {
        *why = errname(errno);
        return 0;
    }
    int ok = connect(s, (struct sockaddr *)&a, sizeof a) == 0;
    *why = ok ? "ok" : errname(errno);
    close(s);
    return ok;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: sockprobe PATH...\n");
        return 2;
    }
    int reached = 0;
    for (int i = 1; i < argc; i++) {
        const char *st, *sp;
        reached |= try(argv[i], SOCK_STREAM, &st);
        reached |= try(argv[i], SOCK_SEQPACKET, &sp);
        printf("path=%s stream=%s seqpacket=%s\n", argv[i], st, sp);
    }
    return reached ? 1 : 0;
}
